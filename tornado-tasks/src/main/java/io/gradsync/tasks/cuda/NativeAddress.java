package io.gradsync.tasks.cuda;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import jcuda.NativePointerObject;

/**
 * The raw address behind a JCuda handle (a stream, a device pointer), for native code of our own
 * (the NCCL shim) that needs it. JCuda keeps the getter protected; we read it once through a
 * private lookup, which works because JCuda sits on the class path.
 */
public final class NativeAddress {
    private static final MethodHandle GET;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(NativePointerObject.class, MethodHandles.lookup());
            GET = lookup.findVirtual(NativePointerObject.class, "getNativePointer", MethodType.methodType(long.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private NativeAddress() {
    }

    public static long of(NativePointerObject handle) {
        try {
            return (long) GET.invokeExact(handle);
        } catch (Throwable t) {
            throw new IllegalStateException("cannot read the native address of " + handle, t);
        }
    }
}
