// Helpers shared by the shims (not part of the module's public header).
#ifndef CIMAGESUPPORT_SHARED_H
#define CIMAGESUPPORT_SHARED_H

#include "CImageSupport.h"

#include <stdio.h>

static inline void cis_message_clear(cis_message *message) { message->text[0] = '\0'; }

static inline void cis_message_set(cis_message *message, const char *text) {
    snprintf(message->text, sizeof message->text, "%s", text ? text : "");
}

#endif
