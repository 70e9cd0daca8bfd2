#include "source_stream.h"

#include <string.h>

/* Refills end at a multiple of this (the vault's chunk size), so one refill decrypts at most one
   chunk, and a refill from a chunk's start takes the chunk whole. */
#define INKY_SOURCE_BLOCK 65536

typedef struct {
    void *source;
    inky_pdf_read_fn read;
    int64_t size;
    /* The offset of buffer[0]: the buffer holds [start, stm->pos). */
    int64_t start;
    unsigned char buffer[INKY_SOURCE_BLOCK];
} inky_source_state;

/* Refills the buffer from the stream's position. A failed read throws: MuPDF takes that for the
   end of the data and carries on, so the caller keeps the failure itself and reports it. */
static int inky_source_next(fz_context *ctx, fz_stream *stm, size_t max) {
    (void)max;
    inky_source_state *state = stm->state;
    int64_t got = 0;
    if (stm->pos < state->size) {
        int64_t want = INKY_SOURCE_BLOCK - stm->pos % INKY_SOURCE_BLOCK;
        if (want > state->size - stm->pos) want = state->size - stm->pos;
        got = state->read(state->source, stm->pos, state->buffer, (size_t)want);
        if (got < 0 || got > want) {
            stm->rp = stm->wp = state->buffer;
            state->start = stm->pos;
            fz_throw(ctx, FZ_ERROR_GENERIC, "cannot read the document's bytes at offset %lld", (long long)stm->pos);
        }
    }
    state->start = stm->pos;
    stm->rp = state->buffer;
    stm->wp = state->buffer + got;
    stm->pos += got;
    if (got == 0) return EOF;
    return *stm->rp++;
}

/* A seek within the bytes already in the buffer moves the read pointer only: MuPDF seeks back
   and forth over the cross-reference table and small objects, mostly within one block. */
static void inky_source_seek(fz_context *ctx, fz_stream *stm, int64_t offset, int whence) {
    inky_source_state *state = stm->state;
    if (whence == SEEK_END) offset += state->size;
    else if (whence == SEEK_CUR) offset += stm->pos - (stm->wp - stm->rp);
    if (offset < 0) fz_throw(ctx, FZ_ERROR_GENERIC, "cannot seek to offset %lld", (long long)offset);
    if (offset > state->size) offset = state->size;
    if (offset >= state->start && offset <= stm->pos) {
        stm->rp = state->buffer + (offset - state->start);
    } else {
        stm->pos = offset;
        state->start = offset;
        stm->rp = stm->wp = state->buffer;
    }
}

/* The buffer held plaintext: zeroed before it is freed. */
static void inky_source_drop(fz_context *ctx, void *opaque) {
    inky_source_state *state = opaque;
    explicit_bzero(state->buffer, sizeof state->buffer);
    fz_free(ctx, state);
}

fz_stream *inky_source_stream_new(fz_context *ctx, void *source, inky_pdf_read_fn read, int64_t size) {
    inky_source_state *state = fz_malloc_struct(ctx, inky_source_state);
    state->source = source;
    state->read = read;
    state->size = size;
    state->start = 0;
    /* fz_new_stream drops the state itself if it cannot allocate the stream. */
    fz_stream *stm = fz_new_stream(ctx, state, inky_source_next, inky_source_drop);
    stm->seek = inky_source_seek;
    stm->rp = stm->wp = state->buffer;
    return stm;
}
