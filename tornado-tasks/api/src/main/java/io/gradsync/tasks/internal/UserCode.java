package io.gradsync.tasks.internal;

import java.lang.invoke.MethodHandles;
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

    /**
     * Defines {@code classBytes}, a class of {@code owner}'s package, beside {@code owner} (its
     * loader and package, not its nest: the new class reaches what any class of that package
     * reaches), and returns a lookup with private access to it.
     *
     * @throws IllegalAccessException where {@code owner}'s module does not open its package to gradsync
     */
    public static MethodHandles.Lookup defineBeside(Class<?> owner, byte[] classBytes) throws IllegalAccessException {
        Module api = UserCode.class.getModule();
        api.addReads(owner.getModule());
        MethodHandles.Lookup beside = MethodHandles.privateLookupIn(owner, MethodHandles.lookup());
        Class<?> defined = beside.defineClass(classBytes);
        return MethodHandles.privateLookupIn(defined, MethodHandles.lookup());
    }
}
