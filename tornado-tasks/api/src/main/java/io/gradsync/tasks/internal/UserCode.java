package io.gradsync.tasks.internal;

import java.lang.reflect.AccessibleObject;

/**
 * The one place that opens users' classes reflectively (a kernel's method, its static final
 * tables, a method reference's serialized form), so that a module holding kernels opens its
 * package to one gradsync module, the kernel API's, whichever part of gradsync reads it.
 *
 * <p>Thread-safety: stateless; any thread.
 */
public final class UserCode {
    private UserCode() {
    }

    /** Makes {@code member} of a user's class accessible; false where its module does not open it to gradsync. */
    public static boolean open(AccessibleObject member) {
        return member.trySetAccessible();
    }
}
