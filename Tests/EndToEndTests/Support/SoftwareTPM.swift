import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A TPM 2.0 of the test's own: `swtpm socket` (Debian's `swtpm`) on two free loopback ports,
/// its state in a directory of the test's, started as if the machine had just booted. Each one
/// is another machine's TPM. ``stop()`` ends it by its pid.
final class SoftwareTPM {
    let directory: URL
    let port: UInt16
    private var pid: pid_t = 0

    /// The TCTI that names it, for `keychaind --tpm`.
    var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    init() throws {
        directory = URL(fileURLWithPath: "/tmp/kc-swtpm-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        port = try Self.freePorts()
        let log = open(directory.appendingPathComponent("swtpm.log").path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        defer { close(log) }
        pid = try ChildSpawn.spawn(
            "/usr/bin/swtpm",
            [
                "socket", "--tpm2", "--tpmstate", "dir=\(directory.path)", "--server",
                "type=tcp,port=\(port),bindaddr=127.0.0.1", "--ctrl", "type=tcp,port=\(port + 1),bindaddr=127.0.0.1",
                "--flags", "not-need-init,startup-clear",
            ], environment: ["PATH": "/usr/bin:/bin"], stdio: (nil, log, log))
        let deadline = Date().addingTimeInterval(10)
        while !Self.accepts(port) {
            guard Date() < deadline else {
                stop()
                throw POSIXError(.ETIMEDOUT)
            }
            usleep(20_000)
        }
    }

    /// Ends the TPM (SIGTERM, then SIGKILL) and removes its state.
    func stop() {
        if pid > 0 {
            ChildSpawn.end(pid, within: 5)
            pid = 0
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// A port whose number and the next are both free on 127.0.0.1 (the server's and the
    /// control channel's).
    static func freePorts() throws -> UInt16 {
        for _ in 0..<50 {
            let port = UInt16.random(in: 20_000...60_000)
            if bindable(port) && bindable(port + 1) { return port }
        }
        throw POSIXError(.EADDRINUSE)
    }

    /// `operation` (bind or connect) on a new TCP socket with 127.0.0.1:`port`; true when it
    /// succeeded. The socket is closed after.
    private static func succeeds(
        _ port: UInt16, _ operation: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32
    ) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                operation(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    private static func bindable(_ port: UInt16) -> Bool { succeeds(port, bind) }

    static func accepts(_ port: UInt16) -> Bool { succeeds(port, connect) }
}
