import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A program a test started through ``ChildSpawn`` (an empty signal mask, default dispositions,
/// no descriptor but its standard ones), known by its pid, which this reaps. Unlike a
/// Foundation `Process` started from a test thread, it does not inherit the thread's blocked
/// SIGTERM, so a service that ends on SIGTERM (gnome-keyring) ends when a test sends it.
final class SpawnedProgram {
    /// The child's pid; it stays this program's until ``waitUntilExit()`` reaps it.
    let processIdentifier: pid_t
    /// The read end of its standard output, when it was captured.
    private let output: Int32?
    private var status: Int32?

    /// Starts `path` with `arguments` in `environment`. Its standard output goes to a pipe with
    /// `capturingOutput` (read by ``readOutputToEnd()``) or to /dev/null; its standard error to
    /// /dev/null, or to the same pipe with `capturingErrors` too; `input`, when given, is written
    /// to its standard input, which then closes (otherwise it reads /dev/null).
    init(
        _ path: String, _ arguments: [String], environment: [String: String], input: String? = nil,
        capturingOutput: Bool = false, capturingErrors: Bool = false
    ) throws {
        let outputPipe = capturingOutput ? try ChildSpawn.pipe() : nil
        let inputPipe = input != nil ? try ChildSpawn.pipe() : nil
        defer {
            if let outputPipe { close(outputPipe.write) }
            if let inputPipe { close(inputPipe.read) }
        }
        do {
            processIdentifier = try ChildSpawn.spawn(
                path, arguments, environment: environment,
                stdio: (inputPipe?.read, outputPipe?.write, capturingErrors ? outputPipe?.write : nil))
        } catch {
            if let outputPipe { close(outputPipe.read) }
            if let inputPipe { close(inputPipe.write) }
            throw error
        }
        output = outputPipe?.read
        if let inputPipe, let input {
            let bytes = Array(input.utf8)
            _ = bytes.withUnsafeBytes { write(inputPipe.write, $0.baseAddress, $0.count) }
            close(inputPipe.write)
        }
    }

    /// Starts `path` with its standard input, output and error on `stdio` (nil: /dev/null); the
    /// caller keeps, and closes, its own copies of those descriptors.
    init(
        _ path: String, _ arguments: [String], environment: [String: String],
        stdio: (input: Int32?, output: Int32?, error: Int32?)
    ) throws {
        processIdentifier = try ChildSpawn.spawn(path, arguments, environment: environment, stdio: stdio)
        output = nil
    }

    deinit {
        if let output { close(output) }
    }

    /// True until the program has ended.
    var isRunning: Bool {
        guard status == nil else { return false }
        var raw: Int32 = 0
        guard waitpid(processIdentifier, &raw, WNOHANG) == processIdentifier else { return true }
        status = raw
        return false
    }

    /// Waits for the program to end and reaps it.
    func waitUntilExit() {
        guard status == nil else { return }
        var raw: Int32 = 0
        while waitpid(processIdentifier, &raw, 0) < 0 && errno == EINTR {}
        status = raw
    }

    /// Its exit code once it has ended (128 + the signal when a signal ended it).
    var terminationStatus: Int32 {
        waitUntilExit()
        let raw = status ?? 0
        return raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
    }

    /// True when a signal ended it (it did not exit).
    var endedBySignal: Bool {
        waitUntilExit()
        return (status ?? 0) & 0x7f != 0
    }

    /// Kills it with SIGKILL, if it still runs, and reaps it.
    func end() {
        if isRunning { kill(processIdentifier, SIGKILL) }
        waitUntilExit()
    }

    /// The next line it writes to its standard output (captured), waiting up to 20 s; nil at
    /// its end or when nothing came.
    func readLine() -> String? {
        guard let output else { return nil }
        return try? ChildSpawn.readLine(FileHandle(fileDescriptor: output, closeOnDealloc: false))
    }

    /// Everything it writes to its standard output, to the end (empty when not captured).
    func readOutputToEnd() -> Data {
        guard let output else { return Data() }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(output, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return data }
            data.append(contentsOf: buffer[0..<count])
        }
    }
}
