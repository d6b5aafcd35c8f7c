import Testing

/// The PAM module's tests, one at a time, the suites too: they share the test user, its
/// keychain, the files they put in /etc/pam.d, and /dev/log.
@Suite(.serialized) struct PAMTests {}
