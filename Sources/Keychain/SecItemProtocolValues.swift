// Values of `kSecAttrProtocol` and `kSecAttrAuthenticationType` (SecItem.h), with Apple's raw four-character strings.
/// Apple's `kSecAttrProtocolFTP` ("ftp ").
public let kSecAttrProtocolFTP: CFString = "ftp "
/// Apple's `kSecAttrProtocolFTPAccount` ("ftpa").
public let kSecAttrProtocolFTPAccount: CFString = "ftpa"
/// Apple's `kSecAttrProtocolHTTP` ("http").
public let kSecAttrProtocolHTTP: CFString = "http"
/// Apple's `kSecAttrProtocolIRC` ("irc ").
public let kSecAttrProtocolIRC: CFString = "irc "
/// Apple's `kSecAttrProtocolNNTP` ("nntp").
public let kSecAttrProtocolNNTP: CFString = "nntp"
/// Apple's `kSecAttrProtocolPOP3` ("pop3").
public let kSecAttrProtocolPOP3: CFString = "pop3"
/// Apple's `kSecAttrProtocolSMTP` ("smtp").
public let kSecAttrProtocolSMTP: CFString = "smtp"
/// Apple's `kSecAttrProtocolSOCKS` ("sox ").
public let kSecAttrProtocolSOCKS: CFString = "sox "
/// Apple's `kSecAttrProtocolIMAP` ("imap").
public let kSecAttrProtocolIMAP: CFString = "imap"
/// Apple's `kSecAttrProtocolLDAP` ("ldap").
public let kSecAttrProtocolLDAP: CFString = "ldap"
/// Apple's `kSecAttrProtocolAppleTalk` ("atlk").
public let kSecAttrProtocolAppleTalk: CFString = "atlk"
/// Apple's `kSecAttrProtocolAFP` ("afp ").
public let kSecAttrProtocolAFP: CFString = "afp "
/// Apple's `kSecAttrProtocolTelnet` ("teln").
public let kSecAttrProtocolTelnet: CFString = "teln"
/// Apple's `kSecAttrProtocolSSH` ("ssh ").
public let kSecAttrProtocolSSH: CFString = "ssh "
/// Apple's `kSecAttrProtocolFTPS` ("ftps").
public let kSecAttrProtocolFTPS: CFString = "ftps"
/// Apple's `kSecAttrProtocolHTTPS` ("htps").
public let kSecAttrProtocolHTTPS: CFString = "htps"
/// Apple's `kSecAttrProtocolHTTPProxy` ("htpx").
public let kSecAttrProtocolHTTPProxy: CFString = "htpx"
/// Apple's `kSecAttrProtocolHTTPSProxy` ("htsx").
public let kSecAttrProtocolHTTPSProxy: CFString = "htsx"
/// Apple's `kSecAttrProtocolFTPProxy` ("ftpx").
public let kSecAttrProtocolFTPProxy: CFString = "ftpx"
/// Apple's `kSecAttrProtocolSMB` ("smb ").
public let kSecAttrProtocolSMB: CFString = "smb "
/// Apple's `kSecAttrProtocolRTSP` ("rtsp").
public let kSecAttrProtocolRTSP: CFString = "rtsp"
/// Apple's `kSecAttrProtocolRTSPProxy` ("rtsx").
public let kSecAttrProtocolRTSPProxy: CFString = "rtsx"
/// Apple's `kSecAttrProtocolDAAP` ("daap").
public let kSecAttrProtocolDAAP: CFString = "daap"
/// Apple's `kSecAttrProtocolEPPC` ("eppc").
public let kSecAttrProtocolEPPC: CFString = "eppc"
/// Apple's `kSecAttrProtocolIPP` ("ipp ").
public let kSecAttrProtocolIPP: CFString = "ipp "
/// Apple's `kSecAttrProtocolNNTPS` ("ntps").
public let kSecAttrProtocolNNTPS: CFString = "ntps"
/// Apple's `kSecAttrProtocolLDAPS` ("ldps").
public let kSecAttrProtocolLDAPS: CFString = "ldps"
/// Apple's `kSecAttrProtocolTelnetS` ("tels").
public let kSecAttrProtocolTelnetS: CFString = "tels"
/// Apple's `kSecAttrProtocolIMAPS` ("imps").
public let kSecAttrProtocolIMAPS: CFString = "imps"
/// Apple's `kSecAttrProtocolIRCS` ("ircs").
public let kSecAttrProtocolIRCS: CFString = "ircs"
/// Apple's `kSecAttrProtocolPOP3S` ("pops").
public let kSecAttrProtocolPOP3S: CFString = "pops"
/// Apple's `kSecAttrAuthenticationTypeNTLM` ("ntlm").
public let kSecAttrAuthenticationTypeNTLM: CFString = "ntlm"
/// Apple's `kSecAttrAuthenticationTypeMSN` ("msna").
public let kSecAttrAuthenticationTypeMSN: CFString = "msna"
/// Apple's `kSecAttrAuthenticationTypeDPA` ("dpaa").
public let kSecAttrAuthenticationTypeDPA: CFString = "dpaa"
/// Apple's `kSecAttrAuthenticationTypeRPA` ("rpaa").
public let kSecAttrAuthenticationTypeRPA: CFString = "rpaa"
/// Apple's `kSecAttrAuthenticationTypeHTTPBasic` ("http").
public let kSecAttrAuthenticationTypeHTTPBasic: CFString = "http"
/// Apple's `kSecAttrAuthenticationTypeHTTPDigest` ("httd").
public let kSecAttrAuthenticationTypeHTTPDigest: CFString = "httd"
/// Apple's `kSecAttrAuthenticationTypeHTMLForm` ("form").
public let kSecAttrAuthenticationTypeHTMLForm: CFString = "form"
/// Apple's `kSecAttrAuthenticationTypeDefault` ("dflt").
public let kSecAttrAuthenticationTypeDefault: CFString = "dflt"
