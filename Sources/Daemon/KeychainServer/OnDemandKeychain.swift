import Biometrics
import Enclave
import Foundation
import KeychainPrompt
import KeychainProtocol
import Synchronization

/// The server of one keychain directory, opened on first use and created only by a request
/// that writes (adding an item, setting a passcode): until then, requests that only look get
/// the answers of an empty keychain and nothing is written
/// (``KeychainServer/replyWithoutKeychain(_:)``). Embedded programs and `keychaind` both serve
/// their callers through one.
public final class OnDemandKeychain: Sendable {
    private let directory: URL?
    private let cache: (any ClassKeyCache)?
    /// The user whose fingers unlock this keychain (``KeychainServer/fingerprintUser``).
    private let fingerprintUser: String
    /// The TPM that seals the device secret, when one does.
    private let tpm: TrustedPlatformModule?
    /// False in the system daemon: no sync remote that is a path of this machine.
    private let localSyncRemotes: Bool
    private let opened: Mutex<KeychainServer?>

    /// The keychain in `directory`, not opened yet, of `fingerprintUser` (this process's user
    /// by default; the system daemon names each keychain's own); unlocked class keys go to
    /// `cache`; `tpm`, when given, seals its device secret; `localSyncRemotes` false refuses a
    /// sync remote that is a path of this machine (``KeychainServer/localSyncRemotes``).
    public init(
        directory: URL, cache: any ClassKeyCache, fingerprintUser: String = FprintdSensor.currentUser(),
        tpm: TrustedPlatformModule? = nil, localSyncRemotes: Bool = true
    ) {
        self.localSyncRemotes = localSyncRemotes
        self.directory = directory
        self.cache = cache
        self.fingerprintUser = fingerprintUser
        self.tpm = tpm
        opened = Mutex(nil)
    }

    /// An already open server.
    public init(server: KeychainServer) {
        directory = nil
        cache = nil
        tpm = nil
        localSyncRemotes = server.localSyncRemotes
        fingerprintUser = server.fingerprintUser
        opened = Mutex(server)
    }

    /// Carries out `request` for `caller`, opening (or, for a writing request, creating) the
    /// keychain first.
    public func perform(
        _ request: KeychainRequest, caller: CallerIdentity, prompts: (any PromptProvider)? = nil
    ) throws(KeychainError) -> KeychainReply {
        if case .eraseUnopenableKeychain = request { return try eraseUnopenable(caller) }
        try RequestValidation.checkNamedGroups(request, caller)
        guard let server = try server(creating: request.kind.facts.createsKeychain) else {
            return try KeychainServer.replyWithoutKeychain(request, fingerprintUser: fingerprintUser)
        }
        return try server.handle(request, caller: caller, prompts: prompts)
    }

    /// Removes the files of a keychain that cannot be opened, after closing the server that
    /// had them open (a long-lived process, keychaind, would otherwise go on with files that
    /// are gone). Refused while the keychain opens and answers.
    private func eraseUnopenable(_ caller: CallerIdentity) throws(KeychainError) -> KeychainReply {
        let result: Result<KeychainReply, KeychainError> = opened.withLock { opened in
            guard let directory else {
                return .failure(KeychainError(.errSecParam, "this keychain was opened by its caller, which erases it"))
            }
            do throws(KeychainError) {
                let server: KeychainServer
                if let opened {
                    server = opened
                } else {
                    server = try KeychainServer(
                        directory: directory, cache: cache ?? ProcessClassKeyCache(), creating: false,
                        fingerprintUser: fingerprintUser, tpm: tpm, localSyncRemotes: localSyncRemotes)
                }
                // Answers errSecParam when the keychain opens, errSecDecode when it does not.
                return .success(try server.handle(.eraseUnopenableKeychain, caller: caller))
            } catch
                where [KeychainError.errSecDecode.status, KeychainError.errSecNotAvailable.status].contains(
                    error.status)
            {
                opened = nil
                do throws(KeychainError) {
                    return .success(try KeychainServer.eraseFiles(in: directory, tpm: tpm).map { .count($0) } ?? .done)
                } catch {
                    return .failure(error)
                }
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The server when the keychain is open.
    public var openedServer: KeychainServer? {
        opened.withLock { $0 }
    }

    /// The server; nil when no keychain exists and `creating` is false.
    private func server(creating: Bool) throws(KeychainError) -> KeychainServer? {
        let result: Result<KeychainServer?, KeychainError> = opened.withLock { opened in
            if let opened { return .success(opened) }
            guard let directory, let cache else { return .success(nil) }
            do throws(KeychainError) {
                opened = try KeychainServer(
                    directory: directory, cache: cache, creating: creating, fingerprintUser: fingerprintUser, tpm: tpm,
                    localSyncRemotes: localSyncRemotes)
                return .success(opened)
            } catch KeychainError.errSecNoSuchKeychain where !creating {
                return .success(nil)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
