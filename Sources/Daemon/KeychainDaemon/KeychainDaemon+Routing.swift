import KeychainPrompt
import KeychainProtocol
import KeychainServer

#if canImport(Glibc)
import Glibc
#endif

/// Where each request goes (``RequestFacts``): to the caller's keychain, to the daemon itself,
/// or to the move of a per-user keychain in; and what it does to owner sessions.
extension KeychainDaemon {
    /// One connection's client: the process, the app it is, and its user's keychain.
    struct Client: Sendable {
        let peer: PeerIdentity
        let app: AppIdentity
        let keychain: UserKeychain
        let connection: UInt64
        /// The move of the user's per-user keychain under way on this connection (system mode).
        let keychainImport: KeychainImport?
        /// The Secret Service bridge whose connection this is, when it acts for this client
        /// (``KeychainRequest/actForProcess(_:)``): every request is still the bridge's to write.
        var bridge: PeerIdentity? = nil

        /// Its owner session's key; nil when its login session has no leader.
        var ownerSession: OwnerSessions.Key? {
            peer.session.map { OwnerSessions.Key(executable: app.identifier, session: $0) }
        }
    }

    /// Who is calling, for one request: the app's groups (in per-user mode its own and the
    /// shared ones the owner granted it; in system mode those registered for it), and whether
    /// its owner session is open. Recomputed for every request, so a grant, a revocation or a
    /// session's end takes effect at once. An untrusted app is never the owner.
    func caller(_ client: Client) -> CallerIdentity {
        let server = client.keychain.onDemand.openedServer
        let groups =
            client.app.registeredGroups ?? server?.accessGroups(forApp: client.app.identifier) ?? [
                client.app.identifier
            ]
        let owner =
            client.app.untrustedBecause == nil && (client.ownerSession.map(client.keychain.owners.isOpen) ?? false)
        return CallerIdentity(
            accessGroups: groups, actsForOwner: owner, connection: client.connection, app: client.app.identifier)
    }

    /// Carries out `request` for `client`: the reply, with the owner session opened, closed or
    /// ended as the request asks.
    func answer(_ request: KeychainRequest, _ client: Client) -> Result<KeychainReply, KeychainError> {
        let caller = caller(client)
        let keychain = client.keychain
        let owners = keychain.owners
        let mark = owners.mark
        keychain.beginRequest()
        var result = Result { () throws(KeychainError) in try reply(to: request, caller, client) }
        // Per-user mode alone: there a program of the user's can run any copy anyway; the system
        // daemon's trust in a path is what keeps a copy from another's items. Not for a Secret
        // Service client: the bridge answers a D-Bus error or an empty search, never the message,
        // and the hint looks through the user's processes at every miss.
        if configuration.mode == .perUser, client.bridge == nil, case .copyMatching(let query) = request,
            case .failure(let error) = result, error.status == KeychainError.errSecItemNotFound.status,
            !caller.actsForOwner,
            let hint = AnotherCopyHint.hint(for: query, client)
        {
            result = .failure(KeychainError(status: error.status, message: "\(error.message); \(hint)"))
        }
        // Before the reply leaves: a client that saw it and then asks the bridge finds the bridge's
        // kept searches stale. Refused requests too: a failed passcode may have erased the keychain.
        if !request.kind.facts.readOnly { keychain.changes?.advance() }
        // Idle time counts from the end of the last request: a long passcode check is not idleness.
        keychain.endRequest()
        defer { record(request, result, caller, client.peer.uid) }
        guard case .success(let reply) = result else { return result }
        let lockedMeanwhile = KeychainError(
            .errSecInteractionNotAllowed, "the keychain locked while the owner session was opening: log in again")
        let effect = request.kind.facts.ownerSessions
        switch effect {
        case .none:
            break
        case .endsAll:
            // Lock and a new passcode end every owner session, as they forget every grant.
            owners.closeAll()
        case .opens, .opensOnMatch, .opensOnAuthentication:
            guard let session = client.ownerSession else {
                result = .failure(Self.noLoginSession)
                break
            }
            if effect == .opensOnMatch, reply.match != .matched { break }
            if effect == .opensOnAuthentication, case .authenticationFailed = reply { break }
            if !owners.open(session, unlessAllEndedSince: mark) { result = .failure(lockedMeanwhile) }
        case .closes:
            client.ownerSession.map(owners.close)
        }
        return result
    }

    static let noLoginSession = KeychainError(
        .errSecInteractionNotAllowed,
        "this process's login session has no leader it can see (it exited, or it runs outside this pid namespace), "
            + "so no owner session can be opened in it: run the command from a terminal or a session of its own "
            + "(setsid)"
    )

    /// The reply to `request`, from the handler its facts name.
    private func reply(
        to request: KeychainRequest, _ caller: CallerIdentity, _ client: Client
    ) throws(KeychainError) -> KeychainReply {
        let facts = request.kind.facts
        if client.app.untrustedBecause != nil, facts.opensOwnerSession {
            throw KeychainError(
                .errSecMissingEntitlement,
                "this program is not trusted by the system keychain daemon (its log says why), so it cannot act "
                    + "for the owner"
            )
        }
        // A sheet is not drawn for a session that could not be opened after it.
        if facts.ownerSessions == .opensOnAuthentication, client.ownerSession == nil { throw Self.noLoginSession }
        if configuration.mode == .system, facts.perUserModeOnly {
            throw KeychainError(
                .errSecParam,
                "the system keychain daemon takes apps' identifiers and groups from its app registry "
                    + "(/etc/keychain/apps.d), "
                    + "which root edits")
        }
        if facts.secretServiceBridgeOnly, client.bridge == nil {
            throw KeychainError(
                .errSecMissingEntitlement,
                "only the Secret Service bridge, acting for a D-Bus client, may send \(request.kind)")
        }
        if facts.needsOwnerSession, !caller.actsForOwner {
            throw KeychainError(
                .errSecMissingEntitlement,
                "\(request.kind == .simulateTouch ? "touches of the simulated sensor are" : "this is") taken only in "
                    + "an owner session (`keychainctl owner login`)")
        }
        switch facts.answeredBy {
        case .keychain:
            let prompts = ClientPrompts(
                client.peer, agents: configuration.mode == .system ? promptAgents : nil)
            let reply = try client.keychain.onDemand.perform(request, caller: caller, prompts: prompts)
            if request.changesSynchronizableItems { syncSoon(client.keychain) }
            return reply
        case .embeddedKeychain:
            throw KeychainError(
                .errSecParam,
                "keychaind asks the owner itself (authenticateOwner): it takes no passcode and no wait for a touch "
                    + "from an app")
        case .daemon:
            switch request.kind {
            case .daemonStatus: return .daemon(try status(of: client.keychain.onDemand, for: client.peer.uid))
            case .identify: return .done
            case .watchChanges:
                guard client.bridge != nil || isTrustedBridge(client) else {
                    throw KeychainError(
                        .errSecMissingEntitlement, "only the Secret Service bridge watches the keychain's changes")
                }
                guard client.keychain.changes != nil else {
                    throw KeychainError(.errSecUnimplemented, "this kernel gives keychaind no sealed memory to share")
                }
                return .done
            case .servePrompts:
                try checkPromptAgent(client)
                return .done
            case .openLoginSession, .closeLoginSession:
                return .count(try changeLogins(request, client.keychain))
            default:
                // A request whose facts name keychaind but that has no answer here: refused, never
                // answered `done` as if it had been carried out.
                throw KeychainError(.errSecUnimplemented, "keychaind has no answer for \(request.kind) yet")
            }
        case .systemDaemon:
            // The per-user daemon has none: its keychain answers that only the system daemon imports.
            guard let keychainImport = client.keychainImport else {
                return try client.keychain.onDemand.perform(request, caller: caller)
            }
            return try keychainImport.perform(request)
        }
    }

    /// A login of the keychain's user opened or closed (the PAM module): the number counted
    /// after it. The last to close locks the keychain when the module asks.
    private func changeLogins(_ request: KeychainRequest, _ keychain: UserKeychain) throws(KeychainError) -> Int {
        switch request {
        case .openLoginSession(let process):
            return try keychain.logins.open(process)
        case .closeLoginSession(let process, let lockWhenLast):
            let left = keychain.logins.close(process)
            if left == 0, lockWhenLast, keychain.lock() {
                logger.info("the last login of uid \(keychain.uid) ended: keychain locked")
            }
            return left
        default:
            throw KeychainError(.errSecInternalComponent, "\(request.kind) is not a login's opening or end")
        }
    }

    /// The daemon's state, and the lock state of the caller's keychain.
    /// In system mode the clients counted are the caller's own: how many other users have is
    /// not theirs to know.
    private func status(of keychain: OnDemandKeychain, for uid: uid_t) throws(KeychainError) -> DaemonStatus {
        guard
            case .status(let device) = try keychain.perform(
                .deviceStatus, caller: CallerIdentity(accessGroups: ["keychaind"]))
        else {
            throw KeychainError.errSecInternalComponent
        }
        let uptime = started.duration(to: .now)
        return DaemonStatus(
            mode: configuration.mode == .system ? "system" : "per-user", pid: getpid(),
            uptime: Double(uptime.components.seconds) + Double(uptime.components.attoseconds) / 1e18,
            connectedClients: connections.count(of: configuration.mode == .system ? uid : nil),
            idleLockSeconds: configuration.idleLockSeconds, device: device, sheets: sheets(for: uid))
    }

    /// Who draws `uid`'s sheets, in words.
    private func sheets(for uid: uid_t) -> String {
        guard configuration.mode == .system else {
            let desktop = SheetProgram.configuredForDesktop.map { SheetProgram.pinentry($0).description } ?? "none"
            return "\(SheetProgram.configuredForTerminal.description); on a desktop, \(desktop)"
        }
        return promptAgents.agent(for: uid) == nil
            ? "none: no prompt agent runs for uid \(uid) (keychainctl prompt-agent)"
            : "the prompt agent of uid \(uid)"
    }
}

extension KeychainReply {
    /// The outcome of a wait for a touch; nil for any other reply.
    fileprivate var match: BiometricMatch? {
        if case .match(let match) = self { match } else { nil }
    }
}
