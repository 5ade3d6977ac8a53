package io.gradsync.tasks.cuda;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import jcuda.NativePointerObject;
import jcuda.driver.CUstream;

/**
 * Raw addresses behind JCuda handles and back: native code of our own (the NCCL shim) and other
 * libraries speak in addresses. JCuda keeps the getter and the stream constructor non-public; we
 * reach them once through private lookups (JCuda is an automatic module or on the class path, so
 * its packages are open to us).
 */
final class NativeAddress {
    private static final MethodHandle GET;
    private static final MethodHandle NEW_STREAM;

    static {
        try {
            MethodHandles.Lookup pointers = MethodHandles.privateLookupIn(NativePointerObject.class, MethodHandles.lookup());
            GET = pointers.findVirtual(NativePointerObject.class, "getNativePointer", MethodType.methodType(long.class));
            MethodHandles.Lookup streams = MethodHandles.privateLookupIn(CUstream.class, MethodHandles.lookup());
            NEW_STREAM = streams.findConstructor(CUstream.class, MethodType.methodType(void.class, long.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private NativeAddress() {
    }

    static long of(NativePointerObject handle) {
        try {
            return (long) GET.invokeExact(handle);
        } catch (Throwable t) {
            throw new IllegalStateException("cannot read the native address of " + handle, t);
        }
    }

    /** A JCuda handle for the stream at {@code address} (made by any library). */
    static CUstream stream(long address) {
        try {
            return (CUstream) NEW_STREAM.invokeExact(address);
        } catch (Throwable t) {
            throw new IllegalStateException("cannot make a stream handle for 0x" + Long.toHexString(address), t);
        }
    }
}
