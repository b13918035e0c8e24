// Helpers shared by the shims (not part of the module's public header).
#ifndef CIMAGESUPPORT_SHARED_H
#define CIMAGESUPPORT_SHARED_H

#include "CImageSupport.h"

#include <stdio.h>

static inline int cis_deadline_passed(int64_t deadline_ns) { return cis_monotonic_ns() >= deadline_ns; }

// The message for CIS_TOO_SLOW.
#define CIS_TOO_SLOW_TEXT "the decode ran past its deadline"

static inline void cis_message_clear(cis_message *message) { message->text[0] = '\0'; }

static inline void cis_message_set(cis_message *message, const char *text) {
    snprintf(message->text, sizeof message->text, "%s", text ? text : "");
}

#endif
