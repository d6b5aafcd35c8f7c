// Values of `kSecAttrProtocol` and `kSecAttrAuthenticationType` (SecItem.h), with Apple's raw four-character strings.
/// Apple's `kSecAttrProtocolFTP` ("ftp ").
nonisolated(unsafe) public let kSecAttrProtocolFTP: CFString = "ftp "
/// Apple's `kSecAttrProtocolFTPAccount` ("ftpa").
nonisolated(unsafe) public let kSecAttrProtocolFTPAccount: CFString = "ftpa"
/// Apple's `kSecAttrProtocolHTTP` ("http").
nonisolated(unsafe) public let kSecAttrProtocolHTTP: CFString = "http"
/// Apple's `kSecAttrProtocolIRC` ("irc ").
nonisolated(unsafe) public let kSecAttrProtocolIRC: CFString = "irc "
/// Apple's `kSecAttrProtocolNNTP` ("nntp").
nonisolated(unsafe) public let kSecAttrProtocolNNTP: CFString = "nntp"
/// Apple's `kSecAttrProtocolPOP3` ("pop3").
nonisolated(unsafe) public let kSecAttrProtocolPOP3: CFString = "pop3"
/// Apple's `kSecAttrProtocolSMTP` ("smtp").
nonisolated(unsafe) public let kSecAttrProtocolSMTP: CFString = "smtp"
/// Apple's `kSecAttrProtocolSOCKS` ("sox ").
nonisolated(unsafe) public let kSecAttrProtocolSOCKS: CFString = "sox "
/// Apple's `kSecAttrProtocolIMAP` ("imap").
nonisolated(unsafe) public let kSecAttrProtocolIMAP: CFString = "imap"
/// Apple's `kSecAttrProtocolLDAP` ("ldap").
nonisolated(unsafe) public let kSecAttrProtocolLDAP: CFString = "ldap"
/// Apple's `kSecAttrProtocolAppleTalk` ("atlk").
nonisolated(unsafe) public let kSecAttrProtocolAppleTalk: CFString = "atlk"
/// Apple's `kSecAttrProtocolAFP` ("afp ").
nonisolated(unsafe) public let kSecAttrProtocolAFP: CFString = "afp "
/// Apple's `kSecAttrProtocolTelnet` ("teln").
nonisolated(unsafe) public let kSecAttrProtocolTelnet: CFString = "teln"
/// Apple's `kSecAttrProtocolSSH` ("ssh ").
nonisolated(unsafe) public let kSecAttrProtocolSSH: CFString = "ssh "
/// Apple's `kSecAttrProtocolFTPS` ("ftps").
nonisolated(unsafe) public let kSecAttrProtocolFTPS: CFString = "ftps"
/// Apple's `kSecAttrProtocolHTTPS` ("htps").
nonisolated(unsafe) public let kSecAttrProtocolHTTPS: CFString = "htps"
/// Apple's `kSecAttrProtocolHTTPProxy` ("htpx").
nonisolated(unsafe) public let kSecAttrProtocolHTTPProxy: CFString = "htpx"
/// Apple's `kSecAttrProtocolHTTPSProxy` ("htsx").
nonisolated(unsafe) public let kSecAttrProtocolHTTPSProxy: CFString = "htsx"
/// Apple's `kSecAttrProtocolFTPProxy` ("ftpx").
nonisolated(unsafe) public let kSecAttrProtocolFTPProxy: CFString = "ftpx"
/// Apple's `kSecAttrProtocolSMB` ("smb ").
nonisolated(unsafe) public let kSecAttrProtocolSMB: CFString = "smb "
/// Apple's `kSecAttrProtocolRTSP` ("rtsp").
nonisolated(unsafe) public let kSecAttrProtocolRTSP: CFString = "rtsp"
/// Apple's `kSecAttrProtocolRTSPProxy` ("rtsx").
nonisolated(unsafe) public let kSecAttrProtocolRTSPProxy: CFString = "rtsx"
/// Apple's `kSecAttrProtocolDAAP` ("daap").
nonisolated(unsafe) public let kSecAttrProtocolDAAP: CFString = "daap"
/// Apple's `kSecAttrProtocolEPPC` ("eppc").
nonisolated(unsafe) public let kSecAttrProtocolEPPC: CFString = "eppc"
/// Apple's `kSecAttrProtocolIPP` ("ipp ").
nonisolated(unsafe) public let kSecAttrProtocolIPP: CFString = "ipp "
/// Apple's `kSecAttrProtocolNNTPS` ("ntps").
nonisolated(unsafe) public let kSecAttrProtocolNNTPS: CFString = "ntps"
/// Apple's `kSecAttrProtocolLDAPS` ("ldps").
nonisolated(unsafe) public let kSecAttrProtocolLDAPS: CFString = "ldps"
/// Apple's `kSecAttrProtocolTelnetS` ("tels").
nonisolated(unsafe) public let kSecAttrProtocolTelnetS: CFString = "tels"
/// Apple's `kSecAttrProtocolIMAPS` ("imps").
nonisolated(unsafe) public let kSecAttrProtocolIMAPS: CFString = "imps"
/// Apple's `kSecAttrProtocolIRCS` ("ircs").
nonisolated(unsafe) public let kSecAttrProtocolIRCS: CFString = "ircs"
/// Apple's `kSecAttrProtocolPOP3S` ("pops").
nonisolated(unsafe) public let kSecAttrProtocolPOP3S: CFString = "pops"
/// Apple's `kSecAttrAuthenticationTypeNTLM` ("ntlm").
nonisolated(unsafe) public let kSecAttrAuthenticationTypeNTLM: CFString = "ntlm"
/// Apple's `kSecAttrAuthenticationTypeMSN` ("msna").
nonisolated(unsafe) public let kSecAttrAuthenticationTypeMSN: CFString = "msna"
/// Apple's `kSecAttrAuthenticationTypeDPA` ("dpaa").
nonisolated(unsafe) public let kSecAttrAuthenticationTypeDPA: CFString = "dpaa"
/// Apple's `kSecAttrAuthenticationTypeRPA` ("rpaa").
nonisolated(unsafe) public let kSecAttrAuthenticationTypeRPA: CFString = "rpaa"
/// Apple's `kSecAttrAuthenticationTypeHTTPBasic` ("http").
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPBasic: CFString = "http"
/// Apple's `kSecAttrAuthenticationTypeHTTPDigest` ("httd").
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPDigest: CFString = "httd"
/// Apple's `kSecAttrAuthenticationTypeHTMLForm` ("form").
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTMLForm: CFString = "form"
/// Apple's `kSecAttrAuthenticationTypeDefault` ("dflt").
nonisolated(unsafe) public let kSecAttrAuthenticationTypeDefault: CFString = "dflt"
