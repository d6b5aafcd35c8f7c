#pragma once
#include <stddef.h>
#include <stdint.h>

/// `base` ^ `exponent` mod `modulus`, all unsigned big-endian, into `result` (`modulus_length`
/// bytes, left-padded with zeros), with OpenSSL's constant-time Montgomery exponentiation
/// (`BN_mod_exp_mont_consttime`; the modulus must be odd). libcrypto is loaded at the first
/// call. 1 on success; 0 when libcrypto cannot be loaded or refused the numbers.
int kc_modular_exponentiation(
    const uint8_t *base, size_t base_length, const uint8_t *exponent, size_t exponent_length,
    const uint8_t *modulus, size_t modulus_length, uint8_t *result);
