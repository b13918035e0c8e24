// The clock decode deadlines are read on.

#include "CImageSupport.h"

#include <time.h>

int64_t cis_monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}
