import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The memory ``SecretBytes`` keep their bytes in: pages locked against swap (`mlock`) and left
/// out of core dumps (`MADV_DONTDUMP`), zeroed whenever a secret gives its room back.
///
/// Small secrets (a password, a key, up to ``slotSize`` bytes) share pages, in slots that are
/// handed out again once zeroed: locking and marking a page takes three system calls, which
/// cost more than the rest of a one-item read, so a page is locked once, when the pool grows,
/// and kept. A larger secret gets whole pages of its own, locked when made and unlocked when
/// freed. The pool never shrinks: it holds as many slots as were ever in use at once.
final class SecretMemory: Sendable {
    /// The process's pool.
    static let shared = SecretMemory()
    /// The largest secret kept in a shared page.
    static let slotSize = 256

    private let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    /// Addresses of the zeroed slots not in use.
    private let freeSlots = Mutex<[UInt]>([])

    /// Room for `count` bytes, zeroed.
    func allocate(_ count: Int) -> UnsafeMutableRawBufferPointer {
        guard count <= Self.slotSize else { return lockedPages(count: (count + page - 1) / page * page) }
        if let slot = freeSlots.withLock({ $0.popLast() }) {
            return UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(bitPattern: slot), count: Self.slotSize)
        }
        let fresh = lockedPages(count: page)
        guard let base = fresh.baseAddress else { return fresh }
        let start = UInt(bitPattern: base)
        freeSlots.withLock { slots in
            for offset in stride(from: Self.slotSize, to: page, by: Self.slotSize) {
                slots.append(start + UInt(offset))
            }
        }
        return UnsafeMutableRawBufferPointer(start: base, count: Self.slotSize)
    }

    /// Zeroes `buffer` and takes it back.
    func release(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        // memset_s-like: a C call the optimizer cannot drop, as the memory is handed out again.
        _ = memset(base, 0, buffer.count)
        if buffer.count == Self.slotSize {
            freeSlots.withLock { $0.append(UInt(bitPattern: base)) }
        } else {
            _ = munlock(base, buffer.count)
            buffer.deallocate()
        }
    }

    /// Whole pages, locked and left out of core dumps.
    private func lockedPages(count: Int) -> UnsafeMutableRawBufferPointer {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: page)
        guard let base = buffer.baseAddress else { return buffer }
        _ = memset(base, 0, count)
        _ = mlock(base, count)
        #if canImport(Glibc)
        _ = madvise(base, count, Int32(MADV_DONTDUMP))
        #endif
        return buffer
    }
}
