/** Unexported: the {@code single} backend (one replica, nothing moves). */
package io.gradsync.sync.backend.single;
