import Foundation

/// The floor under every durable write on this disk: a 4 KiB write and its `fsync`, in the
/// fixtures' folder. A durable add can be no faster than this.
final class FsyncFloor: Sendable {
    static let shared = FsyncFloor()

    private let descriptor: Int32

    private init() {
        try? FileManager.default.createDirectory(at: Fixture.root, withIntermediateDirectories: true)
        let path = Fixture.root.appendingPathComponent("fsync-\(getpid())").path
        descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        precondition(descriptor >= 0, "cannot create \(path)")
        unlink(path)
    }

    func writeAndSync() {
        let page = [UInt8](repeating: 0x5a, count: 4096)
        let written = page.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        precondition(written == 4096 && fsync(descriptor) == 0, "write or fsync failed")
    }
}
