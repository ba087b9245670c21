#ifndef CFUZZDRIVER_H
#define CFUZZDRIVER_H
#include <stddef.h>
#include <stdint.h>

/// One fuzz input; returns 0 (libFuzzer reserves other values).
typedef int (*fuzz_one_input)(const uint8_t *data, size_t size);

/// Hands the command line to libFuzzer's driver and runs `body` for every input. Never returns normally.
int fuzz_run(int argc, char **argv, fuzz_one_input body);

#endif
