import Enclave
import Foundation
import KeychainProtocol
import KeychainSync

/// A machine joins the circle (Docs/Sync.md, "Joining"): it asks with a commitment, a member
/// answers with a nonce, it reveals its own and shows the code, the owner types the code on the
/// member, which approves, and confirms it on the new machine. ``SyncJoin`` holds the messages
/// and the code; here, who writes what to the remote, and when.
extension KeychainServer {
    /// Asks to join the circle on `remote` (step 1). A device waiting to join that remote asks
    /// again, with its key and a new nonce, and any answer to its old request no longer counts.
    func askToJoin(remote: String, deviceName: String) throws(KeychainError) -> SyncReport {
        try checkRemote(remote)
        let waiting = try enclave.loadSyncState().flatMap { $0.list == nil && $0.remote == remote ? $0 : nil }
        if waiting == nil { try requireNoSync() }
        try requireUnlocked("sync makes this device's identity key")
        let identity = if let waiting { waiting.identity } else { try enclave.makeSyncIdentity() }
        let keys = try enclave.openSyncKeys(identity: identity)
        let nonce = SyncJoin.nonce()
        let request = SyncJoin.Request(
            name: deviceName, publicKey: keys.publicKey,
            commitment: SyncJoin.commitment(publicKey: keys.publicKey, nonce: nonce))
        let transport = transport(remote)
        for _ in 0..<Self.syncAttempts {
            let snapshot = try transport.fetch()
            guard let bytes = snapshot.files[SyncPaths.list] else {
                throw KeychainError(
                    .errSecItemNotFound,
                    "\(GitTransport.shown(remote)) holds no circle: set one up (`keychainctl sync setup`)")
            }
            _ = try SyncDeviceList.decode(Data(bytes))
            var changes: [String: [UInt8]?] = [SyncPaths.request(keys.deviceID): Array(request.encoded)]
            for path in snapshot.files.keys where path.hasPrefix(SyncPaths.answers(to: keys.deviceID)) {
                changes[path] = .some(nil)
            }
            guard case .published = try transport.publish(changes, over: snapshot.token) else { continue }
            var state = SyncState(
                remote: remote, deviceName: deviceName, identity: identity, list: nil, offeredList: Data(bytes))
            state.joinNonce = nonce
            state.lastSync = Date()
            try enclave.saveSyncState(state)
            return try syncReport(state)
        }
        throw KeychainError(.errSecIO, "\(GitTransport.shown(remote)) kept changing: try again")
    }

    /// Step 3, on the device asking: fixes the one member's answer to its request, reveals its
    /// nonce, and returns the report whose member has the code. Once fixed, the answer never
    /// changes: a later call shows the same code.
    func showJoinCode() throws(KeychainError) -> SyncReport {
        guard var state = try enclave.loadSyncState(), state.list == nil, let nonce = state.joinNonce else {
            throw Self.notJoining
        }
        let keys = try enclave.openSyncKeys(identity: state.identity)
        let offered = try Self.offeredMembers(state)
        let mine = SyncJoin.Request(
            name: state.deviceName, publicKey: keys.publicKey,
            commitment: SyncJoin.commitment(publicKey: keys.publicKey, nonce: nonce))
        let transport = transport(state.remote)
        var revealed = false
        for _ in 0..<Self.syncAttempts where !revealed {
            let snapshot = try transport.fetch()
            guard let bytes = snapshot.files[SyncPaths.request(keys.deviceID)],
                let request = SyncJoin.Request.decode(bytes), request.commitment == mine.commitment
            else {
                throw KeychainError(
                    .errSecItemNotFound,
                    "this device's request to join is no longer on \(GitTransport.shown(state.remote)): ask again "
                        + "with `keychainctl sync join \(GitTransport.shown(state.remote))`")
            }
            if state.fixedAnswer == nil {
                state.fixedAnswer = try Self.theAnswer(to: mine, in: snapshot, from: offered).encoded
                // Kept before the nonce goes out: no answer read after the reveal is ever used.
                try enclave.saveSyncState(state)
            }
            guard request.nonce == nil else {
                revealed = true
                continue
            }
            var reveal = mine
            reveal.nonce = nonce
            let changes: [String: [UInt8]?] = [SyncPaths.request(keys.deviceID): Array(reveal.encoded)]
            if case .published = try transport.publish(changes, over: snapshot.token) { revealed = true }
        }
        guard revealed else {
            throw KeychainError(.errSecIO, "\(GitTransport.shown(state.remote)) kept changing: try again")
        }
        return try syncReport(state, keys: keys)
    }

    /// Step 5, on the device asking: `code` is the one it shows, so the member whose answer it
    /// fixed is the one it trusts; takes that member's list, with this device in it.
    func confirmJoin(code: String) throws(KeychainError) -> SyncReport {
        guard var state = try enclave.loadSyncState(), state.list == nil else { throw Self.notJoining }
        let keys = try enclave.openSyncKeys(identity: state.identity)
        guard let shown = joinCode(state, keys) else {
            throw KeychainError(
                .errSecInteractionNotAllowed,
                "this device shows no code yet: run `keychainctl sync join` (without a code) to see it")
        }
        guard shown.code == code else {
            throw KeychainError(
                .errSecAuthFailed,
                "that is not the code this device shows (`keychainctl sync join` shows it again); nothing changed")
        }
        let snapshot = try transport(state.remote).fetch()
        guard let bytes = snapshot.files[SyncPaths.list] else {
            throw KeychainError(.errSecItemNotFound, "\(GitTransport.shown(state.remote)) holds no circle any more")
        }
        let list = try SyncDeviceList.decode(Data(bytes))
        guard list.members.contains(where: { $0.id == keys.deviceID }) else {
            throw KeychainError(
                .errSecInteractionNotAllowed,
                "this device is not approved yet: on \(shown.member.name), run `keychainctl sync approve \(code)`, "
                    + "then run this again")
        }
        try list.accept(after: nil, trusting: shown.member.publicKey)
        state.list = list.encoded
        state.offeredList = nil
        state.joinNonce = nil
        state.fixedAnswer = nil
        try enclave.saveSyncState(state)
        return try syncNow()
    }

    /// Step 2, on a member: answers the request of the device whose id starts with `device`
    /// (or the only one asking) with a fresh nonce, kept as this device's one open answer before
    /// it is published. The request it answered already is answered again with the same nonce.
    func answerRequest(device: String?) throws(KeychainError) -> SyncReport {
        guard var state = try enclave.loadSyncState(), state.list != nil else { throw Self.notAMember }
        let keys = try openKeys(state)
        let me = SyncDeviceList.Member(name: state.deviceName, publicKey: keys.publicKey)
        if let device, device.count < 4 {
            throw KeychainError(.errSecParam, "give at least the first 4 digits of the device's id")
        }
        let transport = transport(state.remote)
        for _ in 0..<Self.syncAttempts {
            let snapshot = try transport.fetch()
            var refused: [String] = []
            let list = try acceptList(snapshot, &state, keys, &refused)
            let asking = Self.requestsToJoin(snapshot, list).filter { request in
                device.map { SyncPaths.hex(request.member.id).hasPrefix($0.lowercased()) } ?? true
            }
            guard let request = asking.first else {
                throw KeychainError(
                    .errSecItemNotFound,
                    device == nil
                        ? "no device asks to join: run `keychainctl sync join REMOTE` on it first"
                        : "no device asking to join has an id starting with \(device ?? "")")
            }
            guard asking.count == 1 else {
                let named = asking.map { "\($0.name) (\(SyncPaths.hex($0.member.id).prefix(8)))" }
                throw KeychainError(
                    .errSecParam,
                    "\(asking.count) devices ask to join: \(named.joined(separator: ", ")). Choose the one whose id "
                        + "`keychainctl sync join` showed, with `keychainctl sync approve --device ID`")
            }
            let answer: SyncJoin.Answer
            if let open = state.openAnswer, let held = SyncJoin.Answer.decode(Array(open), signedBy: me),
                held.joining == request.member.id, held.commitment == request.commitment
            {
                answer = held
            } else {
                guard request.nonce == nil else {
                    throw KeychainError(
                        .errSecParam,
                        "\(request.name) has shown its code already, for another answer: ask again on it "
                            + "(`keychainctl sync join REMOTE`), then run this again")
                }
                answer = try keys.answer(request, nonce: SyncJoin.nonce())
                state.openAnswer = answer.encoded
                try enclave.saveSyncState(state)
            }
            let path = SyncPaths.answer(to: request.member.id, from: keys.deviceID)
            if snapshot.files[path] != Array(answer.encoded) {
                guard case .published = try transport.publish([path: Array(answer.encoded)], over: snapshot.token)
                else { continue }
            }
            var report = try syncReport(state, snapshot: snapshot, keys: keys)
            report.requests = [
                SyncReport.Device(
                    id: SyncPaths.hex(request.member.id), name: request.name, code: nil, isThisDevice: false)
            ]
            return report
        }
        throw KeychainError(.errSecIO, "\(GitTransport.shown(state.remote)) kept changing: try again")
    }

    /// Step 4, on a member: approves the device of its open answer if its revealed nonce opens
    /// the commitment this device answered and the code they make is `code`.
    func approveDevice(code: String) throws(KeychainError) -> SyncReport {
        guard var state = try enclave.loadSyncState(), state.list != nil else { throw Self.notAMember }
        let keys = try openKeys(state)
        let me = SyncDeviceList.Member(name: state.deviceName, publicKey: keys.publicKey)
        guard let open = state.openAnswer, let answer = SyncJoin.Answer.decode(Array(open), signedBy: me) else {
            throw KeychainError(
                .errSecItemNotFound,
                "this device has answered no request to join: run `keychainctl sync approve` (without a code) first")
        }
        state.openAnswer = nil
        let snapshot = try changeCircle(&state, keys) { (snapshot, list) throws(KeychainError) in
            guard let bytes = snapshot.files[SyncPaths.request(answer.joining)],
                let request = SyncJoin.Request.decode(bytes), request.member.id == answer.joining
            else {
                throw KeychainError(
                    .errSecItemNotFound,
                    "the request this device answered is no longer on the remote: ask again on the new device")
            }
            guard request.commitment == answer.commitment else {
                throw KeychainError(
                    .errSecAuthFailed,
                    "the request this device answered was replaced on the remote since: nothing is approved. Ask "
                        + "again on the new device, and run `keychainctl sync approve` here")
            }
            guard let nonce = request.nonce else {
                throw KeychainError(
                    .errSecInteractionNotAllowed,
                    "\(request.name) has not shown its code yet: run `keychainctl sync join` on it")
            }
            let expected = SyncJoin.code(
                member: keys.publicKey, joining: request.publicKey, commitment: request.commitment,
                memberNonce: answer.nonce, joiningNonce: nonce)
            guard expected == code else {
                throw KeychainError(
                    .errSecAuthFailed,
                    "\(code) is not the code of \(request.name)'s request with this device's answer: nothing is "
                        + "approved. Type the code \(request.name) shows; if it is the one you typed, someone else's "
                        + "key is in the request: do not approve it")
            }
            let next = try keys.nextList(
                after: list, members: list.members.filter { $0.id != request.member.id } + [request.member],
                epoch: list.epoch)
            var changes: [String: [UInt8]?] = [
                SyncPaths.list: Array(next.encoded), SyncPaths.request(answer.joining): nil,
            ]
            for path in snapshot.files.keys where path.hasPrefix(SyncPaths.answers(to: answer.joining)) {
                changes[path] = .some(nil)
            }
            for epoch in keys.epochs {
                changes[SyncPaths.key(epoch: epoch, request.member.id)] = Array(
                    try keys.wrapKey(epoch: epoch, to: request.publicKey))
            }
            return (next, changes)
        }
        return try syncReport(state, snapshot: snapshot, keys: keys)
    }

    static let notJoining = KeychainError(
        .errSecParam, "this device is not waiting to join a circle: `keychainctl sync join REMOTE` asks to join one")

    /// The code this waiting device shows, and the member it is for; nil before it fixed an
    /// answer.
    func joinCode(_ state: SyncState, _ keys: SyncCircleKeys) -> (member: SyncDeviceList.Member, code: String)? {
        guard let nonce = state.joinNonce, let fixed = state.fixedAnswer,
            let offered = try? Self.offeredMembers(state)
        else { return nil }
        for member in offered {
            guard let answer = SyncJoin.Answer.decode(Array(fixed), signedBy: member) else { continue }
            let code = SyncJoin.code(
                member: member.publicKey, joining: keys.publicKey, commitment: answer.commitment,
                memberNonce: answer.nonce, joiningNonce: nonce)
            return (member, code)
        }
        return nil
    }

    /// The members of the list a waiting device read when it asked (not trusted: the owner's
    /// code tells it which of them to trust).
    static func offeredMembers(_ state: SyncState) throws(KeychainError) -> [SyncDeviceList.Member] {
        guard let offered = state.offeredList else { return [] }
        return try SyncDeviceList.decode(offered).members
    }

    /// The one answer to `request` in `snapshot` signed by a member of `offered`, each looked for
    /// at the path its member writes (`circle/answers/<J>/<M>`): one signature checked per member
    /// at most, whatever else the remote puts in the folder.
    ///
    /// - Throws: `errSecInteractionNotAllowed` while none answered; `errSecParam` when more
    ///   than one did: the code is shown for one answer only.
    private static func theAnswer(
        to request: SyncJoin.Request, in snapshot: SyncSnapshot, from offered: [SyncDeviceList.Member]
    ) throws(KeychainError) -> SyncJoin.Answer {
        let answers = offered.compactMap { member -> SyncJoin.Answer? in
            guard let bytes = snapshot.files[SyncPaths.answer(to: request.member.id, from: member.id)],
                let answer = SyncJoin.Answer.decode(bytes, signedBy: member),
                answer.joining == request.member.id, answer.commitment == request.commitment
            else { return nil }
            return answer
        }
        guard let answer = answers.first else {
            throw KeychainError(
                .errSecInteractionNotAllowed,
                "no device of the circle has answered yet: on one, run `keychainctl sync approve`, then run this again")
        }
        guard answers.count == 1 else {
            throw KeychainError(
                .errSecParam,
                "\(answers.count) devices answered this request, and the code is shown for one only: ask again "
                    + "(`keychainctl sync join REMOTE`) and run `keychainctl sync approve` on one device")
        }
        return answer
    }

    /// The requests to join in `snapshot`, each at the path its key gives, of devices not in
    /// `list`, by id.
    static func requestsToJoin(_ snapshot: SyncSnapshot, _ list: SyncDeviceList) -> [SyncJoin.Request] {
        snapshot.files.compactMap { path, bytes -> SyncJoin.Request? in
            guard path.hasPrefix(SyncPaths.requests), let request = SyncJoin.Request.decode(bytes),
                SyncPaths.request(request.member.id) == path,
                !list.members.contains(where: { $0.id == request.member.id })
            else { return nil }
            return request
        }.sorted { $0.member.id.lexicographicallyPrecedes($1.member.id) }
    }
}
