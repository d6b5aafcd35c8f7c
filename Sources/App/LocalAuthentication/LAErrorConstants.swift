// The C constants of Apple's LAErrorConstants.h, which code maps `LAError` codes through
// (`case Int(kLAErrorUserCancel):`): the same values as `LAError.Code`'s raw values. Apple's
// macros import into Swift as `Int32` (the domain as `String`); so do these.

/// The user failed to provide valid credentials (`LAError.Code.authenticationFailed`).
public let kLAErrorAuthenticationFailed: Int32 = -1
/// The user tapped Cancel (`LAError.Code.userCancel`).
public let kLAErrorUserCancel: Int32 = -2
/// The user tapped the fallback button (`LAError.Code.userFallback`).
public let kLAErrorUserFallback: Int32 = -3
/// The system cancelled the authentication (`LAError.Code.systemCancel`).
public let kLAErrorSystemCancel: Int32 = -4
/// No device passcode is set (`LAError.Code.passcodeNotSet`).
public let kLAErrorPasscodeNotSet: Int32 = -5
/// No biometry on the device (`LAError.Code.touchIDNotAvailable`, now `biometryNotAvailable`).
public let kLAErrorTouchIDNotAvailable: Int32 = -6
/// No finger enrolled (`LAError.Code.touchIDNotEnrolled`, now `biometryNotEnrolled`).
public let kLAErrorTouchIDNotEnrolled: Int32 = -7
/// Biometry locked out until the passcode is entered (`LAError.Code.touchIDLockout`).
public let kLAErrorTouchIDLockout: Int32 = -8
/// The app cancelled the authentication (`LAError.Code.appCancel`).
public let kLAErrorAppCancel: Int32 = -9
/// The context was invalidated (`LAError.Code.invalidContext`).
public let kLAErrorInvalidContext: Int32 = -10
/// No companion device is near (`LAError.Code.companionNotAvailable`).
public let kLAErrorCompanionNotAvailable: Int32 = -11
/// The name of ``kLAErrorCompanionNotAvailable`` before iOS 18 (`watchNotAvailable`).
public let kLAErrorWatchNotAvailable: Int32 = kLAErrorCompanionNotAvailable
/// No biometric accessory is paired (`LAError.Code.biometryNotPaired`).
public let kLAErrorBiometryNotPaired: Int32 = -12
/// The paired biometric accessory is not connected (`LAError.Code.biometryDisconnected`).
public let kLAErrorBiometryDisconnected: Int32 = -13
/// Invalid dimensions (`LAError.Code.invalidDimensions`).
public let kLAErrorInvalidDimensions: Int32 = -14
/// A prompt was needed but interaction is not allowed (`LAError.Code.notInteractive`).
public let kLAErrorNotInteractive: Int32 = -1004
/// No biometry on the device (`LAError.Code.biometryNotAvailable`).
public let kLAErrorBiometryNotAvailable: Int32 = kLAErrorTouchIDNotAvailable
/// No finger enrolled (`LAError.Code.biometryNotEnrolled`).
public let kLAErrorBiometryNotEnrolled: Int32 = kLAErrorTouchIDNotEnrolled
/// Biometry locked out until the passcode is entered (`LAError.Code.biometryLockout`).
public let kLAErrorBiometryLockout: Int32 = kLAErrorTouchIDLockout
/// The error domain, as LAErrorConstants.h spells it (the same as `LAErrorDomain`).
public let kLAErrorDomain = "com.apple.LocalAuthentication"
