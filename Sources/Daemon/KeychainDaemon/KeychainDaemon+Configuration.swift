import Enclave
import Foundation
import KeychainSupport

extension KeychainDaemon {
    /// How a daemon runs.
    public struct Configuration: Sendable {
        /// Whom a daemon serves.
        public enum Mode: Sendable, Equatable {
            /// Its own user, whose files it keeps in the user's home (`$XDG_DATA_HOME/keychain`).
            case perUser
            /// Every local user, each with a keychain of their own in `<uid>/` under
            /// ``Configuration/keychainDirectory``, run as a system user that owns those files.
            case system
        }

        /// Whom the daemon serves.
        public var mode: Mode
        /// The keychain's files (`$XDG_DATA_HOME/keychain`); in system mode the directory that
        /// holds every user's (`/var/lib/keychain`).
        public var keychainDirectory: URL
        /// The socket's directory (`$XDG_RUNTIME_DIR/keychain`; in system mode `/run/keychain`).
        public var runtimeDirectory: URL
        /// Seconds without a request after which the keychain locks; 0 never.
        public var idleLockSeconds: Double
        /// Seconds between two syncs of a keychain whose sync is set up (Docs/Sync.md); 0 syncs
        /// only after a write and when asked.
        public var syncIntervalSeconds: Double
        /// Seconds from a write of a synchronizable item to the sync that publishes it: a burst
        /// of writes shares one.
        public var syncDelaySeconds: Double
        /// A listening socket handed over by systemd (`LISTEN_FDS`); nil binds the socket.
        public var listeningDescriptor: Int32?
        /// System mode: the app registry (`/etc/keychain/apps.d`), read at each connection.
        public var registryDirectory: URL
        /// The TPM that seals each keychain's device secret and counts its database's
        /// generations; nil keeps the secrets in files.
        public var tpm: TrustedPlatformModule?
        /// System mode: the one user this process serves as that user's worker, and the channel
        /// on which the front hands it their connections (``SystemFront``); nil: the daemon
        /// accepts on its socket itself.
        public var worker: Worker?

        /// A system daemon's worker: the user it serves and its channel from the front.
        public struct Worker: Sendable {
            /// The user served; a connection of any other uid is refused.
            public var uid: uid_t
            /// The channel (a `SOCK_SEQPACKET` socket) the user's connections arrive on.
            public var channel: Int32

            /// A worker's part.
            public init(uid: uid_t, channel: Int32) {
                self.uid = uid
                self.channel = channel
            }
        }

        /// A configuration.
        public init(
            mode: Mode = .perUser, keychainDirectory: URL, runtimeDirectory: URL, idleLockSeconds: Double = 300,
            listeningDescriptor: Int32? = nil,
            registryDirectory: URL = URL(fileURLWithPath: KeychainPaths.systemAppRegistry),
            tpm: TrustedPlatformModule? = nil, syncIntervalSeconds: Double = 300, syncDelaySeconds: Double = 2,
            worker: Worker? = nil
        ) {
            self.worker = worker
            self.tpm = tpm
            self.syncIntervalSeconds = syncIntervalSeconds
            self.syncDelaySeconds = syncDelaySeconds
            self.mode = mode
            self.registryDirectory = registryDirectory
            self.keychainDirectory = keychainDirectory
            self.runtimeDirectory = runtimeDirectory
            self.idleLockSeconds = idleLockSeconds
            self.listeningDescriptor = listeningDescriptor
        }
    }

    /// Another daemon serves the runtime directory (or, in system mode, the state directory).
    public struct AlreadyRunning: Error, CustomStringConvertible {
        public var description: String { "keychaind is already running here" }
    }
}
