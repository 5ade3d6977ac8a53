/**
 * Unexported: the {@code nccl} backend, NCCL's all-reduce in one process or one per GPU: its provider,
 * coordinator, communicators, call plan, layout check across ranks, and watch with abort on timeout.
 */
package io.gradsync.sync.backend.nccl;
