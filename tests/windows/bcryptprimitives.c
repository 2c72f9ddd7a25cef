/* Test-only shim for Wine 8.0, never shipped: Rust's standard library (>= 1.78) imports
 * ProcessPrng from bcryptprimitives.dll, which Wine added only in 8.13, so a Rust exe does not
 * load under Debian's Wine 8.0. This DLL, placed next to the exe under test, exports ProcessPrng
 * and answers it with BCryptGenRandom (the system RNG), as Windows' own bcryptprimitives does. */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    return BCryptGenRandom(NULL, data, (ULONG)len, BCRYPT_USE_SYSTEM_PREFERRED_RNG) == 0;
}
