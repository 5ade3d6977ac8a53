/**
 * Unexported: what every backend plugs into ({@link io.gradsync.sync.backend.BackendProvider}, the
 * {@link io.gradsync.sync.backend.Backends} registry with one line per backend) and the pieces
 * several backends share (the local synchronizers' base, input checks, slice plans). Each backend
 * is a subpackage of its own.
 */
package io.gradsync.sync.backend;
