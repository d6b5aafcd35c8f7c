import ArgumentParser
import Foundation
import Keychain

/// `keychainctl sync`: synchronizable items across the owner's machines, over a git remote
/// (Docs/Sync.md). Every subcommand needs an owner session.
struct Sync: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sync items added with kSecAttrSynchronizable across your machines, over a git remote.",
        discussion:
            "The remote (a private repository on any host, or a bare repository over ssh) holds only ciphertext. "
            + "Start a circle on one machine with `sync setup`. To add a machine: `sync join REMOTE` on it, "
            + "`sync approve` on a machine of the circle, `sync join` on the new one (it shows a code), "
            + "`sync approve CODE` on the first, and `sync join --code CODE` on the new one. keychaind then syncs "
            + "after each change and every few minutes. "
            + "Every subcommand needs an owner session (`keychainctl owner login`).",
        subcommands: [
            SetUp.self, Join.self, Now.self, SyncStatus.self, Devices.self, Approve.self, RemoveDevice.self,
            History.self, PickBranch.self,
        ])

    struct SetUp: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "setup", abstract: "Start a circle on a git remote, with this machine as its first device.")
        @Argument(help: ArgumentHelp("The git remote: a URL, user@host:path, or a path.", valueName: "remote"))
        var remote: String
        @Option(help: "This machine's name in the circle (default: its host name).") var name: String?

        func run() throws {
            try KeychainCommand.run {
                let report = try KeychainDevice.sync(.setUp(remote: remote, deviceName: name ?? Sync.hostName))
                print("sync set up on \(remote): this machine is the circle's first device")
                Sync.show(report)
            }
        }
    }

    struct Join: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Ask to join the circle on a git remote; then see the code, and confirm it.",
            discussion:
                "`sync join REMOTE` asks. On a machine of the circle, `keychainctl sync approve` answers. Then "
                + "`sync join` here shows the code: type it on that machine (`keychainctl sync approve CODE`), and "
                + "once it says approved, run `keychainctl sync join --code CODE` here.")
        @Argument(help: ArgumentHelp("The git remote the circle is on, to ask.", valueName: "remote")) var remote:
            String?
        @Option(help: "This machine's name in the circle (default: its host name).") var name: String?
        @Option(help: "The code this machine showed, once the other machine approved it, to finish joining.")
        var code: String?

        func validate() throws {
            guard remote == nil || code == nil else {
                throw ValidationError("give a remote to ask to join, nothing to see the code, or --code to finish")
            }
        }

        func run() throws {
            try KeychainCommand.run {
                if let code {
                    let report = try KeychainDevice.sync(.confirmJoin(code: code))
                    print("joined the circle on \(report.remote ?? "")")
                    Sync.show(report)
                } else if let remote {
                    let report = try KeychainDevice.sync(.join(remote: remote, deviceName: name ?? Sync.hostName))
                    let id =
                        report.requests.first(where: \.isThisDevice).map(\.id).map { " (id \($0.prefix(8)))" } ?? ""
                    print(
                        """
                        asked to join the circle on \(remote) as \(name ?? Sync.hostName)\(id). On a machine of the \
                        circle, run `keychainctl sync approve`; then run `keychainctl sync join` here to see the code.
                        """)
                } else {
                    let report = try KeychainDevice.sync(.showJoinCode)
                    guard let member = report.members.first(where: { $0.code != nil }), let code = member.code else {
                        return print("no code yet")
                    }
                    print(
                        """
                        code \(code)
                        On \(member.name) (id \(member.id.prefix(8))), type it: `keychainctl sync approve \(code)`. \
                        Once it says approved, run `keychainctl sync join --code \(code)` here.
                        """)
                }
            }
        }
    }

    struct Now: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Sync now.")
        func run() throws {
            try KeychainCommand.run { Sync.show(try KeychainDevice.sync(.now)) }
        }
    }

    struct SyncStatus: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: "Where sync stands: the remote, the last sync, what failed.")
        func run() throws {
            try KeychainCommand.run { Sync.show(try KeychainDevice.sync(.status)) }
        }
    }

    struct Devices: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The devices of the circle, and those asking to join.")
        func run() throws {
            try KeychainCommand.run {
                let report = try KeychainDevice.sync(.status)
                for device in report.members {
                    print("\(device.id)  \(device.name)\(device.isThisDevice ? "  (this machine)" : "")")
                }
                for device in report.requests { print("\(device.id)  \(device.name)  asks to join") }
            }
        }
    }

    struct Approve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Let a machine join: answer its request, then type the code it shows.",
            discussion:
                "`sync approve` answers the request of the machine asking to join (`--device` chooses one when "
                + "several ask). `keychainctl sync join` on that machine then shows a code; `sync approve CODE` "
                + "here approves it if the code is that machine's with this one's answer.")
        @Argument(help: ArgumentHelp("The six-digit code the new machine shows.", valueName: "code")) var code: String?
        @Option(help: "The first digits of the id of the machine to answer (`sync devices`).") var device: String?

        func validate() throws {
            guard code == nil || device == nil else {
                throw ValidationError("--device chooses whom to answer; the code then approves that machine")
            }
        }

        func run() throws {
            try KeychainCommand.run {
                guard let code else {
                    let report = try KeychainDevice.sync(.answer(device: device))
                    let asking = report.requests.first
                    let name = asking?.name ?? "the new machine"
                    print(
                        """
                        answered the request of \(name) (id \(asking?.id.prefix(8) ?? "")). On \(name), run \
                        `keychainctl sync join`: it shows a code; type it here with `keychainctl sync approve CODE`.
                        """)
                    return
                }
                let report = try KeychainDevice.sync(.approve(code: code))
                print("approved: finish with `keychainctl sync join --code \(code)` on the new machine")
                Sync.show(report)
            }
        }
    }

    struct RemoveDevice: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a device from the circle: it can read nothing written after.",
            discussion: "A new sync key is made and given to the other devices only.")
        @Argument(help: ArgumentHelp("The first digits of its id (`sync devices`).", valueName: "id")) var id: String
        func run() throws {
            try KeychainCommand.run {
                let report = try KeychainDevice.sync(.removeDevice(id))
                print("removed \(id); the circle's sync key is now of epoch \(report.epoch)")
                Sync.show(report)
            }
        }
    }

    struct PickBranch: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pick-branch",
            abstract: "After the circle's history forked, follow one branch again.",
            discussion:
                "Two device lists followed one version: a device of the circle signed a change the others never "
                + "saw, or the remote showed machines different histories. This machine publishes nothing until you "
                + "pick: --keep puts this machine's lists back on the remote (machines that took the other branch "
                + "then stop in turn, and you pick on them), --take follows the remote's from the last version both "
                + "share.")
        @Flag(help: "Keep this machine's branch.") var keep = false
        @Flag(help: "Take the remote's branch.") var take = false

        func validate() throws {
            guard keep != take else { throw ValidationError("give --keep or --take") }
        }

        func run() throws {
            try KeychainCommand.run {
                let report = try KeychainDevice.sync(.pickBranch(keepThisDevices: keep))
                print("following \(keep ? "this machine's" : "the remote's") branch of the circle's history")
                Sync.show(report)
            }
        }
    }

    struct History: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The versions that lost a conflict, kept on the remote: which item, which device, when.",
            discussion:
                "Two machines changed one item between syncs: the later change won everywhere, and the other is kept "
                + "on the remote, sealed, for 30 days after the change that beat it. Put one back with "
                + "`add-generic-password -U --synchronizable`.")
        @Flag(help: "Print each version's secret too.") var showSecrets = false

        func run() throws {
            try KeychainCommand.run {
                let report = try KeychainDevice.sync(.history)
                guard !report.kept.isEmpty else { return print("no version lost a conflict, or none is kept") }
                for version in report.kept {
                    var line =
                        "\(version.itemClass)  \(version.service)  \(version.account)  from \(version.device), "
                        + "changed \(version.changed)"
                    if showSecrets {
                        line += "  " + String(decoding: version.secret.withUnsafeBytes { Data($0) }, as: UTF8.self)
                    }
                    print(line)
                }
            }
        }
    }

    static var hostName: String { ProcessInfo.processInfo.hostName }

    static func show(_ report: SyncReport) {
        var lines: [String] = []
        switch report.membership {
        case .none: lines.append("sync: not set up")
        case .waitingForApproval: lines.append("sync: waiting to be approved, on \(report.remote ?? "")")
        case .member:
            lines.append("sync: \(report.remote ?? ""), \(report.members.count) devices, key epoch \(report.epoch)")
        }
        if let lastSync = report.lastSync { lines.append("last sync: \(lastSync)") }
        if report.membership == .member {
            lines.append("last sync published \(report.published) and applied \(report.applied)")
        }
        if let since = report.failingSince {
            lines.append("failing since \(since): \(report.lastError ?? "")")
        } else if let error = report.lastError {
            lines.append("held: \(error)")
        }
        for refusal in report.refused { lines.append("refused: \(refusal)") }
        if let wentBack = report.wentBack { lines.append("the remote went back: \(wentBack)") }
        print(lines.joined(separator: "\n"))
    }
}
