import KeychainProtocol
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The audit trail: passcode failures, failed integrity checks (a replayed row, an altered or
/// rolled-back database), and which app read or changed which item (class and service, never a
/// secret or another attribute's value). What each request writes is its
/// ``RequestFacts/audit``.
extension KeychainDaemon {
    func record(
        _ request: KeychainRequest, _ result: Result<KeychainReply, KeychainError>, _ caller: CallerIdentity,
        _ uid: uid_t
    ) {
        let outcome: String =
            switch result {
            case .success: "ok"
            case .failure(let error): "\(error.status)"
            }
        var metadata: Logger.Metadata = [
            "uid": "\(uid)", "app": "\(caller.defaultAccessGroup)", "connection": "\(caller.connection)",
            "result": "\(outcome)",
        ]
        if case .failure(let error) = result, error.status == KeychainError.errSecDecode.status {
            // A replayed or altered row, a rolled-back database: the owner must hear of it.
            var details = metadata
            details["because"] = "\(error.message)"
            audit.critical("integrity check failed: nothing was returned", metadata: details)
        }
        switch request.kind.facts.audit {
        case .none:
            break
        case .itemAccess:
            guard let (itemClass, attributes, reads) = request.itemSubject else { break }
            metadata["class"] = "\(itemClass.rawValue)"
            if case .string(let service)? = attributes["svce"] { metadata["service"] = "\(service)" }
            audit.info(request.kind == .add ? "add" : reads ? "read" : "search", metadata: metadata)
        case .enclaveKeyMade:
            audit.info("enclave key made", metadata: metadata)
        case .enclaveKeyUsed:
            guard case .useEnclaveKey(let use) = request else { break }
            if case .sign = use.operation {
                audit.info("enclave key signed", metadata: metadata)
            } else {
                audit.info("enclave key agreed a secret", metadata: metadata)
            }
        case .passcodeCheck:
            audit.notice("passcode check", metadata: metadata)
        case .ownerAuthentication:
            switch result {
            case .success(.authenticationFailed(let failure, _)): metadata["result"] = "\(failure)"
            case .success: metadata["result"] = "authenticated"
            case .failure: break
            }
            let purpose =
                switch request.kind {
                case .unlockBySheet: "unlocking"
                case .openOwnerSessionBySheet: "opening an owner session"
                default: "an app"
                }
            audit.notice("owner authentication for \(purpose)", metadata: metadata)
        case .promptAgent:
            audit.notice("prompt agent offered", metadata: metadata)
        case .otherAppSecretItem:
            switch request {
            case .readOtherAppSecretItem(_, let account):
                metadata["item"] = "\(account)"
                audit.info("read of another app's Secret Service item", metadata: metadata)
            case .allowOtherAppSecretItem(_, let account, _):
                metadata["item"] = "\(account)"
                if case .success(.authenticationFailed(let failure, _)) = result { metadata["result"] = "\(failure)" }
                audit.notice("the owner was asked to let an app read another app's item", metadata: metadata)
            default: break
            }
        case .actForProcess:
            guard case .actForProcess(let process) = request else { break }
            metadata["for pid"] = "\(process.pid)"
            audit.info("Secret Service bridge acts for a D-Bus client", metadata: metadata)
        case .ownerSessionByFingerprint:
            // Polled every tenth of a second while the user is asked to touch: only touches are
            // worth a line.
            guard case .success(.match(let match)) = result, match != .noTouch else { break }
            metadata["match"] = "\(match)"
            audit.notice("opening an owner session with a fingerprint", metadata: metadata)
        case .unlockByFingerprint:
            guard case .success(.match(let match)) = result, match != .noTouch else { break }
            metadata["match"] = "\(match)"
            audit.notice("unlocking with a fingerprint", metadata: metadata)
        case .loginSession:
            switch request {
            case .openLoginSession(let process):
                metadata["login pid"] = "\(process.pid)"
                audit.info("login opened", metadata: metadata)
            case .closeLoginSession(let process, _):
                metadata["login pid"] = "\(process.pid)"
                if case .success(.count(let left)) = result { metadata["logins left"] = "\(left)" }
                audit.info("login closed", metadata: metadata)
            default: break
            }
        case .backup:
            guard case .success(.backupPart(let part)) = result, let summary = part.summary else { break }
            metadata["migratable"] = "\(summary.migratable)"
            metadata["this device only"] = "\(summary.thisDeviceOnly)"
            metadata["left out"] = "\(summary.leftOut)"
            audit.notice("backup made", metadata: metadata)
        case .restore:
            if case .success(.restored(let report)) = result {
                metadata["added"] = "\(report.added)"
                metadata["replaced"] = "\(report.replaced)"
                metadata["kept"] = "\(report.kept)"
                metadata["from another device"] = "\(report.fromAnotherDevice)"
            }
            audit.notice("backup restored", metadata: metadata)
        case .sync:
            guard case .sync(let command) = request else { break }
            metadata["command"] = "\(command.auditName)"
            if case .success(.sync(let report)) = result { recordSync(report, &metadata) }
            audit.notice("sync", metadata: metadata)
        case .keychainImport:
            audit.notice("moving a per-user keychain in", metadata: metadata)
        case .ownerSession:
            audit.notice(
                request.kind == .openOwnerSession ? "opening an owner session" : "closing an owner session",
                metadata: metadata)
        case .entitlement:
            guard case .setEntitlement(let app, let group, let granted) = request else { break }
            metadata["target"] = "\(app)"
            metadata["group"] = "\(group)"
            audit.notice(granted ? "entitlement granted" : "entitlement revoked", metadata: metadata)
        case .appDeclaration:
            guard case .declareApp(let app, let declaration) = request else { break }
            metadata["target"] = "\(app)"
            if let declaration {
                metadata["identifier"] = "\(declaration.applicationIdentifier)"
                metadata["groups"] = "\(declaration.accessGroups.joined(separator: ","))"
            }
            audit.notice(declaration == nil ? "app declaration removed" : "app declared", metadata: metadata)
        }
    }
}

extension KeychainRequest {
    /// The item a request adds or the items it looks for: their class, the attributes given,
    /// and whether their data is returned.
    fileprivate var itemSubject: (ItemClass, [String: AttributeValue], reads: Bool)? {
        switch self {
        case .add(let item): (item.itemClass, item.attributes, false)
        case .copyMatching(let query), .update(let query, _), .delete(let query):
            (query.itemClass, query.attributes, query.returns.contains(.data))
        default: nil
        }
    }
}
