/**
 * Unexported: the {@code nccl} backend, NCCL's all-reduce, broadcast, reduce-scatter and all-gather in
 * one process or one per GPU: its provider, coordinator, communicators, call plan, each collective's
 * NCCL calls, layout check across ranks, and watch with abort on timeout.
 */
package io.gradsync.sync.backend.nccl;
