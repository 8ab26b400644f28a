// libFuzzer's driver, for a fuzzer that has its own main (compiler-rt's FuzzerInterface.h).
// Only declared here: the definition comes with -sanitize=fuzzer, so only FUZZING builds call it.
#ifndef CLIBFUZZER_H
#define CLIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
