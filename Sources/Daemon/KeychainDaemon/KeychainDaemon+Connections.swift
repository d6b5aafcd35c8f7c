#if canImport(Glibc)
import Glibc
#endif
import CKeychainSupport
import Foundation
import KeychainProtocol
import Logging
import ProcessBoundSockets

/// A connection's life: admitted, identified, greeted, then its requests, each proved to come
/// from the process that was identified.
///
/// Identity belongs to a process, never to a connection. The daemon identifies the process that
/// connected (``PeerIdentity``, ``AppIdentity``), and then:
/// - **Nothing written before the greeting counts.** Once identified, the daemon checks that no
///   byte is waiting and sends its greeting; a client writes only after it. So every request was
///   written after the identification read the executable: a program that connects, writes and
///   then executes a trusted binary (hoping to be identified as it) is refused.
/// - **Every byte comes from the identified process.** The kernel attaches the writer's pid to
///   what the daemon reads (``ClientSocket``): a request written by a child that inherited the
///   socket, by a process it was handed to (`SCM_RIGHTS`), or by one that took it
///   (`pidfd_getfd`) is refused with `errSecInteractionNotAllowed`, audited, and the connection
///   closed.
/// - **The process is still the one identified.** Its pidfd must be alive at each request (so
///   its pid cannot belong to another), and in system mode a trusted app must be untraced and run
///   the file that was trusted (``ExecutableTrust/stillUntraced(_:executable:)``).
///
/// Each connection is served on a thread of its own: a request that waits (a passcode check, a
/// wait for a touch) holds that thread and nobody else's. A user's connections and requests
/// under way are capped (``ConnectionTable``, ``UserKeychain/requestSlots``), and in system mode
/// a connection idle for ``idleConnectionSeconds`` is closed, so one user cannot take what
/// another needs.
extension KeychainDaemon {
    /// Seconds a system daemon's connection may stay without a request: ten minutes, longer
    /// than any authentication context's reuse (at most five). The per-user daemon keeps
    /// connections as long as their apps like: an app that made itself undumpable cannot be
    /// identified by it again.
    static let idleConnectionSeconds: Int32 = 600

    /// Takes connection `descriptor` on the accepting thread: refused at once when its user (or
    /// the daemon) has as many as allowed, else served on a thread of its own
    /// (``ConnectionThreads``: one that served an earlier connection, when one is waiting).
    func admit(_ descriptor: Int32) {
        let socket = ClientSocket(descriptor, maximumFrame: WireFrame.maximumRequest)
        var pid: Int32 = 0
        var uid: UInt32 = 0
        guard kc_peer_credentials(descriptor, &pid, &uid) == 0 else {
            socket.close()
            return
        }
        // Per-user: the same user only; another uid never reaches the keychain (DESIGN.md). A
        // system worker: its user only (the front hands it no other).
        let served = configuration.mode == .system ? configuration.worker?.uid : getuid()
        guard served == nil || uid == served else {
            refuse(
                socket,
                KeychainError(.errSecInteractionNotAllowed, "this keychain daemon serves uid \(served ?? 0) only"),
                audit: "a process of uid \(uid)")
            socket.close()
            return
        }
        let number: UInt64
        do throws(ConnectionTable.Refusal) {
            number = try connections.admit(socket, uid: uid)
        } catch {
            let reason =
                switch error {
                case .userAtLimit(let limit):
                    "uid \(uid) already has \(limit) connections open, the most one user may have: close some "
                        + "(each app keeps one)"
                case .daemonAtLimit(let limit):
                    "the daemon has \(limit) connections open, the most it takes; try again shortly"
                case .stopping: "the daemon is stopping"
                }
            refuse(
                socket, KeychainError(.errSecInteractionNotAllowed, reason),
                audit: "pid \(pid) of uid \(uid): \(reason)")
            socket.close()
            return
        }
        let user = uid
        connectionThreads.run { [self] in
            serve(socket, number: number)
            connections.remove(number, uid: user)
            socket.close()
        }
    }

    /// Sends `error` in place of the greeting (the caller closes the connection).
    private func refuse(_ socket: ClientSocket, _ error: KeychainError, audit reason: String) {
        audit.warning("connection refused", metadata: ["peer": "\(reason)"])
        var reply = ReplyCoder.encode(.failure(error))
        socket.send(&reply)
    }

    /// Identifies the client of `socket`, greets it, and answers its requests until it closes,
    /// idles, breaks a rule, or the daemon stops.
    private func serve(_ socket: ClientSocket, number: UInt64) {
        let identity: PeerIdentity
        do throws(PeerIdentity.Refusal) {
            identity = try PeerIdentity.of(socket.descriptor)
        } catch {
            refuse(
                socket, KeychainError(.errSecInteractionNotAllowed, "keychaind cannot identify this process: \(error)"),
                audit: "\(error)")
            return
        }
        defer { identity.close() }
        let app = appIdentity(of: identity)
        guard kc_pidfd_is_alive(identity.pidfd) == 1 else {
            refuse(
                socket, KeychainError(.errSecInteractionNotAllowed, "the process exited while keychaind identified it"),
                audit: "pid \(identity.pid), which exited while it was identified")
            return
        }
        // Written before it was identified: possibly by another program than the one identified.
        guard !socket.hasPendingBytes else {
            refuse(
                socket,
                KeychainError(
                    .errSecInteractionNotAllowed,
                    "the request was sent before keychaind's greeting: a client waits for it"),
                audit: "pid \(identity.pid) (\(identity.executable)) wrote before it was identified")
            return
        }
        var client = Client(
            peer: identity, app: app, keychain: keychain(of: identity.uid), connection: number,
            keychainImport: configuration.mode == .system
                ? KeychainImport(state: configuration.keychainDirectory, uid: identity.uid, connection: number) : nil)
        defer { if client.bridge != nil { client.peer.close() } }
        defer {
            client.keychainImport?.abandon()
            client.keychain.onDemand.openedServer?.endConnection(number)
        }
        auditIfUntrusted(app, identity, as: "untrusted app: its own items only")
        audit.debug(
            "connection",
            metadata: [
                "uid": "\(identity.uid)", "app": "\(app.identifier)", "pid": "\(identity.pid)",
                "connection": "\(number)",
            ])
        var greeting = ReplyCoder.encode(.success(.done))
        guard socket.send(&greeting) else { return }
        let idle = configuration.mode == .system ? Self.idleConnectionSeconds : nil
        while !connections.isStopping {
            switch socket.receive(from: identity.pid, idleSeconds: idle) {
            case .closed, .timedOut, .failed:
                return
            case .foreignWriter(let writer):
                audit.warning(
                    "request refused: written by another process than the one identified",
                    metadata: [
                        "app": "\(app.identifier)", "pid": "\(identity.pid)", "writer": "\(writer)",
                        "connection": "\(number)",
                    ])
                var reply = ReplyCoder.encode(
                    .failure(
                        KeychainError(
                            .errSecInteractionNotAllowed,
                            "this connection belongs to pid \(identity.pid); a request written by another process "
                                + "(pid \(writer)) is refused: a connection cannot be inherited or handed over"
                        )))
                socket.send(&reply)
                return
            case .frame(var frame):
                var (reply, next) = answer(frame, client)
                frame.wipe()
                guard socket.send(&reply) else { return }
                switch next {
                case .close: return
                case .nextRequest: continue
                case .actFor(let acting):
                    client.keychainImport?.abandon()
                    client = acting
                case .servePrompts:
                    servePromptAgent(socket, client)
                    return
                case .sendChangeNumber(let descriptor):
                    guard kc_send_descriptor(socket.descriptor, descriptor) == 0 else { return }
                }
            }
        }
    }

    /// The app `identity` runs, as this daemon's mode decides it.
    func appIdentity(of identity: PeerIdentity) -> AppIdentity {
        configuration.mode == .system
            ? AppIdentity.system(identity, registry: AppRegistry(directory: configuration.registryDirectory))
            : .perUser(identity)
    }

    /// Writes `line` to the audit log, with why, when `app` is not trusted.
    func auditIfUntrusted(_ app: AppIdentity, _ identity: PeerIdentity, as line: Logger.Message) {
        guard let reason = app.untrustedBecause else { return }
        audit.warning(
            line,
            metadata: [
                "uid": "\(identity.uid)", "app": "\(identity.executable)", "pid": "\(identity.pid)",
                "because": "\(reason)",
            ])
    }

    /// What a connection does once a reply is sent.
    private enum AfterReply {
        case nextRequest
        case close
        /// The connection is its user's prompt agent from now on.
        case servePrompts
        /// The connection's requests are this client's from now on (a Secret Service bridge's
        /// ``KeychainRequest/actForProcess(_:)``).
        case actFor(Client)
        /// The change number's descriptor follows the reply (``KeychainRequest/watchChanges``).
        case sendChangeNumber(Int32)
    }

    /// The reply to one frame, and what the connection does next.
    private func answer(_ frame: InboundFrame, _ client: Client) -> (reply: [UInt8], next: AfterReply) {
        let request: KeychainRequest
        switch frame {
        case .oversized(let length):
            return (
                ReplyCoder.encode(
                    .failure(
                        WireError("a request of \(length) bytes, over the \(WireFrame.maximumRequest)-byte limit")
                            .keychainError)), .close
            )
        case .truncated:
            return (
                ReplyCoder.encode(.failure(WireError("the connection ended inside a request").keychainError)), .close
            )
        case .body(let body):
            do throws(WireError) {
                request = try RequestCoder.decode(body)
            } catch {
                if let suppressed = malformedLog.admit() {
                    audit.warning(
                        "malformed request",
                        metadata: [
                            "app": "\(caller(client).defaultAccessGroup)", "reason": "\(error.reason)",
                            "unlogged since the last": "\(suppressed)",
                        ])
                }
                return (ReplyCoder.encode(.failure(error.keychainError)), .close)
            }
        }
        // The process must still be the one identified: alive (its pid is still its own) and, for
        // a trusted app, untraced and running the same file.
        guard kc_pidfd_is_alive(client.peer.pidfd) == 1 else {
            let exited = KeychainError(
                .errSecInteractionNotAllowed, "the process that opened this connection has exited")
            return (ReplyCoder.encode(.failure(exited)), .close)
        }
        if let file = client.app.executableFile, !ExecutableTrust.stillUntraced(client.peer.pid, executable: file) {
            audit.warning(
                "connection closed: the app is traced or runs another program",
                metadata: ["app": "\(client.app.identifier)", "pid": "\(client.peer.pid)"])
            return (
                ReplyCoder.encode(
                    .failure(
                        KeychainError(
                            .errSecInteractionNotAllowed,
                            "this process is being traced, or runs another program than when it connected; the "
                                + "daemon no longer trusts it"
                        ))), .close
            )
        }
        if case .actForProcess(let process) = request {
            let result = Result { () throws(KeychainError) in try acting(for: process, bridge: client) }
            record(request, result.map { .actingFor(app: $0.app.identifier) }, caller(client), client.peer.uid)
            switch result {
            case .success(let acting):
                return (ReplyCoder.encode(.success(.actingFor(app: acting.app.identifier))), .actFor(acting))
            case .failure(let error): return (ReplyCoder.encode(.failure(error)), .close)
            }
        }
        // A sheet waits on a person, not on a processor: it takes no slot, so that apps waiting
        // for their user do not hold up the user's other requests. Its passcode checks come at
        // the speed of typing.
        let takesSlot = !request.kind.facts.drawsSheet
        if takesSlot { client.keychain.requestSlots.wait() }
        defer { if takesSlot { client.keychain.requestSlots.signal() } }
        let result = answer(request, client)
        let succeeded = (try? result.get()) != nil
        if request.kind == .watchChanges, succeeded, let changes = client.keychain.changes {
            return (ReplyCoder.encode(result), .sendChangeNumber(changes.descriptor))
        }
        return (ReplyCoder.encode(result), request.kind == .servePrompts && succeeded ? .servePrompts : .nextRequest)
    }
}
