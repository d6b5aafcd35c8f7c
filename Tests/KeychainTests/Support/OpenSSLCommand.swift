import Foundation

/// The real `openssl` command, run in a directory of its own that is removed afterwards: the
/// peer the tests check byte formats against.
final class OpenSSLCommand {
    /// Where the command runs and its files go.
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("openssl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// Runs `openssl arguments…` and gives its exit status and its output and errors together.
    @discardableResult
    func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    /// Runs `openssl arguments…` and fails unless it succeeds.
    func succeed(_ arguments: [String]) throws {
        let (status, output) = try run(arguments)
        guard status == 0 else { throw Failure(arguments: arguments, output: output) }
    }

    /// A file in the directory.
    func file(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }

    /// Writes a file in the directory.
    func write(_ data: Data, to name: String) throws {
        try data.write(to: directory.appendingPathComponent(name))
    }

    /// `openssl` exited with a failure.
    struct Failure: Error, CustomStringConvertible {
        let arguments: [String]
        let output: String
        var description: String { "openssl \(arguments.joined(separator: " ")) failed: \(output)" }
    }
}
