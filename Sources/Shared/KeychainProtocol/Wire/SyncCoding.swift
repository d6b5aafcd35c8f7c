import Foundation

/// The wire form of ``SyncCommand`` and ``SyncReport``.
enum SyncCoding {
    /// The longest remote, device name or message a sync request or report carries.
    static let maximumText = 4096
    /// The most devices a report lists.
    static let maximumDevices = 256
    /// The most refusals a report carries.
    static let maximumRefusals = 1024
    /// The most kept versions a report carries.
    static let maximumKept = 1024

    static func write(_ command: SyncCommand, to writer: inout WireWriter) {
        switch command {
        case .setUp(let remote, let name): writer.u8(1); writer.string(remote); writer.string(name)
        case .join(let remote, let name): writer.u8(2); writer.string(remote); writer.string(name)
        case .now: writer.u8(3)
        case .status: writer.u8(4)
        case .approve(let code): writer.u8(5); writer.string(code)
        case .removeDevice(let device): writer.u8(6); writer.string(device)
        case .confirmJoin(let code): writer.u8(7); writer.string(code)
        case .history: writer.u8(8)
        case .answer(let device): writer.u8(9); writer.optional(device) { $0.string($1) }
        case .showJoinCode: writer.u8(10)
        case .pickBranch(let keep): writer.u8(11); writer.bool(keep)
        }
    }

    static func command(_ reader: inout WireReader) throws(WireError) -> SyncCommand {
        switch try reader.u8() {
        case 1: return .setUp(remote: try reader.string(max: maximumText), deviceName: try reader.string(max: 256))
        case 2: return .join(remote: try reader.string(max: maximumText), deviceName: try reader.string(max: 256))
        case 3: return .now
        case 4: return .status
        case 5: return .approve(code: try reader.string(max: 64))
        case 6: return .removeDevice(try reader.string(max: 64))
        case 7: return .confirmJoin(code: try reader.string(max: 64))
        case 8: return .history
        case 9:
            return .answer(
                device: try reader.optional { (reader: inout WireReader) throws(WireError) in
                    try reader.string(max: 64)
                })
        case 10: return .showJoinCode
        case 11: return .pickBranch(keepThisDevices: try reader.bool())
        default: throw WireError("an unknown sync command")
        }
    }

    static func write(_ report: SyncReport, to writer: inout WireWriter) {
        writer.u8(report.membership.rawValue)
        writer.optional(report.remote) { $0.string($1) }
        for devices in [report.members, report.requests] {
            writer.array(devices) { writer, device in
                writer.string(device.id)
                writer.string(device.name)
                writer.optional(device.code) { $0.string($1) }
                writer.bool(device.isThisDevice)
            }
        }
        writer.u32(report.epoch)
        for date in [report.lastSync, report.failingSince] {
            writer.optional(date) { $0.double($1.timeIntervalSince1970) }
        }
        writer.optional(report.lastError) { $0.string($1) }
        writer.int(report.published)
        writer.int(report.applied)
        writer.array(report.refused) { $0.string($1) }
        writer.array(report.kept) { writer, version in
            writer.string(version.itemClass)
            writer.string(version.service)
            writer.string(version.account)
            writer.string(version.device)
            writer.double(version.changed.timeIntervalSince1970)
            writer.secret(version.secret)
        }
        writer.optional(report.wentBack) { $0.string($1) }
    }

    static func report(_ reader: inout WireReader) throws(WireError) -> SyncReport {
        guard let membership = SyncReport.Membership(rawValue: try reader.u8()) else {
            throw WireError("an unknown sync membership")
        }
        let remote = try reader.optional { (reader: inout WireReader) throws(WireError) in
            try reader.string(max: maximumText)
        }
        var lists: [[SyncReport.Device]] = []
        for _ in 0..<2 {
            lists.append(
                try reader.array(max: maximumDevices) { (reader: inout WireReader) throws(WireError) in
                    SyncReport.Device(
                        id: try reader.string(max: 64), name: try reader.string(max: 256),
                        code: try reader.optional { (reader: inout WireReader) throws(WireError) in
                            try reader.string(max: 64)
                        }, isThisDevice: try reader.bool())
                })
        }
        let epoch = try reader.u32()
        var dates: [Date?] = []
        for _ in 0..<2 {
            dates.append(
                try reader.optional { (reader: inout WireReader) throws(WireError) in
                    try reader.date()
                })
        }
        let lastError = try reader.optional { (reader: inout WireReader) throws(WireError) in
            try reader.string(max: maximumText)
        }
        return SyncReport(
            membership: membership, remote: remote, members: lists[0], requests: lists[1], epoch: epoch,
            lastSync: dates[0], failingSince: dates[1], lastError: lastError,
            published: try reader.int(in: 0...Int(Int32.max)), applied: try reader.int(in: 0...Int(Int32.max)),
            refused: try reader.array(max: maximumRefusals) { (reader: inout WireReader) throws(WireError) in
                try reader.string(max: maximumText)
            },
            kept: try reader.array(max: maximumKept) { (reader: inout WireReader) throws(WireError) in
                SyncReport.KeptVersion(
                    itemClass: try reader.string(max: 16),
                    service: try reader.string(max: KeychainLimits.maximumAttributeSize),
                    account: try reader.string(max: KeychainLimits.maximumAttributeSize),
                    device: try reader.string(max: 256), changed: try reader.date(),
                    secret: try reader.secret(max: KeychainLimits.maximumSecretSize))
            },
            wentBack: try reader.optional { (reader: inout WireReader) throws(WireError) in
                try reader.string(max: maximumText)
            })
    }
}
