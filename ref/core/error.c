#include "ref/core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int tf_error_set(tf_error *err, int code, const char *format, ...)
{
    if (err) {
        va_list args;
        va_start(args, format);
        vsnprintf(err->message, sizeof err->message, format, args);
        va_end(args);
        err->code = code;
    }
    return code;
}

void tf_error_prefix(tf_error *err, const char *format, ...)
{
    if (!err)
        return;
    char prefix[TF_ERROR_MESSAGE_SIZE];
    va_list args;
    va_start(args, format);
    vsnprintf(prefix, sizeof prefix, format, args);
    va_end(args);
    /* Shift the message right to make room for "prefix: ", truncating its end if need be. */
    size_t prefix_length = strlen(prefix);
    if (prefix_length > sizeof err->message - 3)
        prefix_length = sizeof err->message - 3;
    size_t room = sizeof err->message - 1 - prefix_length - 2;
    size_t keep = strlen(err->message);
    if (keep > room)
        keep = room;
    memmove(err->message + prefix_length + 2, err->message, keep);
    err->message[prefix_length + 2 + keep] = '\0';
    memcpy(err->message, prefix, prefix_length);
    err->message[prefix_length] = ':';
    err->message[prefix_length + 1] = ' ';
}

void tf_error_clear(tf_error *err)
{
    if (err) {
        err->code = TF_OK;
        err->message[0] = '\0';
    }
}
