import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A bare repository served over HTTP by `git http-backend` behind Python's HTTP server, which
/// asks for one user's password (Basic), as a git host asks over HTTPS: what git's credential
/// helper is for. ``stop()`` ends the server by its pid and removes the repository.
final class GitHTTPServer {
    let directory: URL
    let port: Int
    let user: String
    private let server: SpawnedProgram

    /// The repository's URL, with the user git logs in as.
    var url: String { "http://\(user)@127.0.0.1:\(port)/repository.git" }
    /// The bare repository on disk.
    var repository: URL { directory.appendingPathComponent("repository.git") }

    /// Serves a new bare repository to `user` with `password`.
    init(user: String, password: String) throws {
        self.user = user
        directory = URL(fileURLWithPath: "/tmp/kc-githttp-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        let made = try SpawnedProgram(
            "/usr/bin/git",
            ["init", "-q", "--bare", "-b", "main", directory.appendingPathComponent("repository.git").path],
            environment: ["PATH": "/usr/bin:/bin", "HOME": directory.path])
        guard made.terminationStatus == 0 else { throw POSIXError(.EIO) }
        server = try SpawnedProgram(
            "/usr/bin/python3", ["-c", Self.script, directory.path, user, password],
            environment: ["PATH": "/usr/bin:/bin", "HOME": directory.path], capturingOutput: true)
        guard let line = server.readLine(), let port = Int(line) else {
            server.end()
            throw POSIXError(.EIO)
        }
        self.port = port
    }

    func stop() {
        server.end()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The server: a 401 without the right password; otherwise the request goes to
    /// `git http-backend` as CGI, pushes allowed (`REMOTE_USER` set).
    static let script = """
        import base64, http.server, subprocess, sys
        root, user, password = sys.argv[1:4]
        expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *arguments):
                pass
            def do_GET(self):
                self.serve()
            def do_POST(self):
                self.serve()
            def serve(self):
                if self.headers.get("Authorization") != expected:
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="git"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                path, _, query = self.path.partition("?")
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                environment = {"GIT_PROJECT_ROOT": root, "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path,
                    "QUERY_STRING": query, "REQUEST_METHOD": self.command, "REMOTE_USER": user,
                    "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(length),
                    "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""), "PATH": "/usr/bin:/bin"}
                output = subprocess.run(["git", "http-backend"], input=body, env=environment,
                    capture_output=True).stdout
                head, _, content = output.partition(b"\\r\\n\\r\\n")
                status, headers = 200, []
                for line in head.decode().split("\\r\\n"):
                    name, _, value = line.partition(": ")
                    if name.lower() == "status":
                        status = int(value.split()[0])
                    elif name:
                        headers.append((name, value))
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """
}
