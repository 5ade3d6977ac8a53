/*
 * gradsync JNI shim over NCCL.
 *
 * Built with gcc alone: no CUDA or NCCL headers are needed, because the few NCCL and CUDA
 * driver types used here are declared below (checked against NCCL's public nccl.h and
 * CUDA's cuda.h). libnccl.so.2 and libcuda.so.1 are opened with dlopen at run time, so the
 * shim loads on machines without either, and every entry point reports a missing library
 * or symbol as a Java exception instead of failing to link.
 *
 * Java-side arguments are validated in io.gradsync.nccl before any call lands here; this
 * file still checks every return code and every JNI allocation.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <jni.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_gradsync_nccl_NcclNative.h"

/* ---- NCCL declarations (values as in nccl.h; stable ABI across NCCL 2.x) ---- */

typedef struct ncclComm *ncclComm_t;

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
    char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6,
    ncclInProgress = 7,
    ncclTimeout = 8
} ncclResult_t;

/* Only the values the Java enums pass are listed; both enums are int-sized in nccl.h. */
typedef enum { ncclFloat16 = 6, ncclFloat32 = 7, ncclBfloat16 = 9 } ncclDataType_t;
typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 } ncclRedOp_t;

/* cudaStream_t and CUstream are the same pointer type, so a driver-API stream works. */
typedef struct CUstream_st *cudaStream_t;

/* ---- CUDA driver API declarations (cuda.h) ---- */

typedef int CUresult; /* CUDA_SUCCESS == 0 */
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;

/* ---- function tables filled by dlsym ---- */

static struct {
    ncclResult_t (*getVersion)(int *);
    const char *(*getErrorString)(ncclResult_t);
    const char *(*getLastError)(ncclComm_t);
    ncclResult_t (*getUniqueId)(ncclUniqueId *);
    ncclResult_t (*commInitRank)(ncclComm_t *, int, ncclUniqueId, int);
    ncclResult_t (*commInitAll)(ncclComm_t *, int, const int *);
    ncclResult_t (*commFinalize)(ncclComm_t);
    ncclResult_t (*commDestroy)(ncclComm_t);
    ncclResult_t (*commAbort)(ncclComm_t);
    ncclResult_t (*commGetAsyncError)(ncclComm_t, ncclResult_t *);
    ncclResult_t (*commCount)(ncclComm_t, int *);
    ncclResult_t (*commCuDevice)(ncclComm_t, int *);
    ncclResult_t (*commUserRank)(ncclComm_t, int *);
    ncclResult_t (*allReduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                              cudaStream_t);
    ncclResult_t (*broadcast)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*reduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t,
                           cudaStream_t);
    ncclResult_t (*reduceScatter)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                  cudaStream_t);
    ncclResult_t (*allGather)(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
    ncclResult_t (*groupStart)(void);
    ncclResult_t (*groupEnd)(void);
} nccl;

typedef struct {
    const char *name;
    void **slot;
} symbol_entry;

/* The casts from function pointer slots to void** follow POSIX's dlsym convention. */
static const symbol_entry nccl_symbols[] = {
    {"ncclGetVersion", (void **)&nccl.getVersion},
    {"ncclGetErrorString", (void **)&nccl.getErrorString},
    {"ncclGetLastError", (void **)&nccl.getLastError},
    {"ncclGetUniqueId", (void **)&nccl.getUniqueId},
    {"ncclCommInitRank", (void **)&nccl.commInitRank},
    {"ncclCommInitAll", (void **)&nccl.commInitAll},
    {"ncclCommFinalize", (void **)&nccl.commFinalize},
    {"ncclCommDestroy", (void **)&nccl.commDestroy},
    {"ncclCommAbort", (void **)&nccl.commAbort},
    {"ncclCommGetAsyncError", (void **)&nccl.commGetAsyncError},
    {"ncclCommCount", (void **)&nccl.commCount},
    {"ncclCommCuDevice", (void **)&nccl.commCuDevice},
    {"ncclCommUserRank", (void **)&nccl.commUserRank},
    {"ncclAllReduce", (void **)&nccl.allReduce},
    {"ncclBroadcast", (void **)&nccl.broadcast},
    {"ncclReduce", (void **)&nccl.reduce},
    {"ncclReduceScatter", (void **)&nccl.reduceScatter},
    {"ncclAllGather", (void **)&nccl.allGather},
    {"ncclGroupStart", (void **)&nccl.groupStart},
    {"ncclGroupEnd", (void **)&nccl.groupEnd},
};
#define NCCL_SYMBOL_COUNT (sizeof(nccl_symbols) / sizeof(nccl_symbols[0]))

static struct {
    CUresult (*init)(unsigned int);
    CUresult (*deviceGet)(CUdevice *, int);
    CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*primaryCtxRelease)(CUdevice);
    CUresult (*ctxSetCurrent)(CUcontext);
    CUresult (*getErrorName)(CUresult, const char **);
    CUresult (*getErrorString)(CUresult, const char **);
} cu;

/* Load state. Written under load_lock, read afterwards: Java loads once before any call. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static void *nccl_lib;
static void *cuda_lib;
static int cuda_ready;

static jclass nccl_exception_class;
static jmethodID nccl_exception_ctor;

#define NOT_AN_NCCL_RESULT (-1)

/* ---- helpers ---- */

/* NewStringUTF wants modified UTF-8; library and dlerror text may hold any bytes, so keep ASCII. */
static jstring new_ascii_string(JNIEnv *env, const char *text) {
    if (text == NULL) {
        return NULL;
    }
    size_t n = strnlen(text, 8192);
    char *copy = malloc(n + 1);
    if (copy == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        copy[i] = (c >= 0x80 || (c < 0x20 && c != '\n' && c != '\t')) ? '?' : (char)c;
    }
    copy[n] = '\0';
    jstring s = (*env)->NewStringUTF(env, copy);
    free(copy);
    return s;
}

/* Throws NcclException(call, code, text, lastError). Never called with an exception pending. */
static void throw_exception(JNIEnv *env, const char *call, int code, const char *text, const char *last) {
    if ((*env)->ExceptionCheck(env)) {
        return;
    }
    jstring jcall = new_ascii_string(env, call);
    jstring jtext = new_ascii_string(env, text);
    jstring jlast = new_ascii_string(env, last);
    if ((*env)->ExceptionCheck(env)) {
        return; /* an OutOfMemoryError is already on its way */
    }
    jobject ex = (*env)->NewObject(env, nccl_exception_class, nccl_exception_ctor, jcall, (jint)code, jtext, jlast);
    if (ex != NULL) {
        (*env)->Throw(env, (jthrowable)ex);
    }
}

static void throw_nccl(JNIEnv *env, const char *call, ncclResult_t result, ncclComm_t comm) {
    const char *text = nccl.getErrorString != NULL ? nccl.getErrorString(result) : NULL;
    /* ncclGetLastError holds the detail (which peer, which CUDA call); it may predate this call. */
    const char *last = nccl.getLastError != NULL ? nccl.getLastError(comm) : NULL;
    throw_exception(env, call, (int)result, text, last);
}

/* Returns 1 when NCCL is loaded and the symbol resolved, else throws and returns 0. */
static int need(JNIEnv *env, const void *fn, const char *name) {
    if (nccl_lib == NULL) {
        throw_exception(env, name, NOT_AN_NCCL_RESULT, "the NCCL library is not loaded", NULL);
        return 0;
    }
    if (fn == NULL) {
        char text[256];
        snprintf(text, sizeof text,
                 "symbol %s is not exported by the loaded NCCL library (older NCCL than this call needs)", name);
        throw_exception(env, name, NOT_AN_NCCL_RESULT, text, NULL);
        return 0;
    }
    return 1;
}

static void throw_cuda(JNIEnv *env, const char *call, int device, CUresult r) {
    const char *name = NULL;
    const char *desc = NULL;
    if (cu.getErrorName == NULL || cu.getErrorName(r, &name) != 0) {
        name = "unknown CUresult";
    }
    if (cu.getErrorString == NULL || cu.getErrorString(r, &desc) != 0) {
        desc = "";
    }
    char text[512];
    snprintf(text, sizeof text, "device %d: %s (CUresult %d) %s", device, name, r, desc);
    throw_exception(env, call, NOT_AN_NCCL_RESULT, text, NULL);
}

/* Opens libcuda.so.1 once and calls cuInit(0). Returns 1 on success, else throws. */
static int ensure_cuda(JNIEnv *env) {
    if (pthread_mutex_lock(&load_lock) != 0) {
        throw_exception(env, "pthread_mutex_lock", NOT_AN_NCCL_RESULT, "cannot take the load lock", NULL);
        return 0;
    }
    int ok = cuda_ready;
    if (!ok) {
        if (cuda_lib == NULL) {
            dlerror();
            cuda_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
            if (cuda_lib == NULL) {
                const char *err = dlerror();
                char text[1024];
                snprintf(text, sizeof text, "cannot open the CUDA driver library libcuda.so.1: %s",
                         err != NULL ? err : "unknown dlopen error");
                pthread_mutex_unlock(&load_lock);
                throw_exception(env, "dlopen(libcuda.so.1)", NOT_AN_NCCL_RESULT, text, NULL);
                return 0;
            }
        }
        /* cuDevicePrimaryCtxRelease is the _v2 entry point since CUDA 11; the plain name is older. */
        const struct {
            const char *name;
            const char *fallback;
            void **slot;
        } syms[] = {
            {"cuInit", NULL, (void **)&cu.init},
            {"cuDeviceGet", NULL, (void **)&cu.deviceGet},
            {"cuDevicePrimaryCtxRetain", NULL, (void **)&cu.primaryCtxRetain},
            {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease", (void **)&cu.primaryCtxRelease},
            {"cuCtxSetCurrent", NULL, (void **)&cu.ctxSetCurrent},
            {"cuGetErrorName", NULL, (void **)&cu.getErrorName},
            {"cuGetErrorString", NULL, (void **)&cu.getErrorString},
        };
        for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
            *syms[i].slot = dlsym(cuda_lib, syms[i].name);
            if (*syms[i].slot == NULL && syms[i].fallback != NULL) {
                *syms[i].slot = dlsym(cuda_lib, syms[i].fallback);
            }
            if (*syms[i].slot == NULL) {
                char text[256];
                snprintf(text, sizeof text, "libcuda.so.1 does not export %s", syms[i].name);
                pthread_mutex_unlock(&load_lock);
                throw_exception(env, "dlsym", NOT_AN_NCCL_RESULT, text, NULL);
                return 0;
            }
        }
        CUresult r = cu.init(0);
        if (r != 0) {
            pthread_mutex_unlock(&load_lock);
            throw_cuda(env, "cuInit", -1, r);
            return 0;
        }
        cuda_ready = 1;
        ok = 1;
    }
    pthread_mutex_unlock(&load_lock);
    return ok;
}

/*
 * Makes the primary context of `ordinal` current on this thread, as JCuda's driver-API code in
 * gradsync does, so NCCL (through the CUDA runtime) runs on that device and shares its context.
 * The retain is kept for the communicator's life and dropped by release_device.
 */
static int bind_device(JNIEnv *env, int ordinal) {
    if (!ensure_cuda(env)) {
        return 0;
    }
    CUdevice dev;
    CUresult r = cu.deviceGet(&dev, ordinal);
    if (r != 0) {
        throw_cuda(env, "cuDeviceGet", ordinal, r);
        return 0;
    }
    CUcontext ctx;
    r = cu.primaryCtxRetain(&ctx, dev);
    if (r != 0) {
        throw_cuda(env, "cuDevicePrimaryCtxRetain", ordinal, r);
        return 0;
    }
    r = cu.ctxSetCurrent(ctx);
    if (r != 0) {
        cu.primaryCtxRelease(dev);
        throw_cuda(env, "cuCtxSetCurrent", ordinal, r);
        return 0;
    }
    return 1;
}

/* Drops the retain taken by bind_device. Throws only if nothing else is pending. */
static void release_device(JNIEnv *env, int ordinal) {
    if (ordinal < 0 || !cuda_ready) {
        return;
    }
    CUdevice dev;
    CUresult r = cu.deviceGet(&dev, ordinal);
    if (r == 0) {
        r = cu.primaryCtxRelease(dev);
    }
    if (r != 0) {
        throw_cuda(env, "cuDevicePrimaryCtxRelease", ordinal, r);
    }
}

static ncclComm_t as_comm(jlong handle) { return (ncclComm_t)(intptr_t)handle; }

/* ---- JNI entry points ---- */

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved) {
    (void)reserved;
    JNIEnv *env;
    if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK) {
        return JNI_ERR;
    }
    jclass local = (*env)->FindClass(env, "io/gradsync/nccl/NcclException");
    if (local == NULL) {
        return JNI_ERR;
    }
    nccl_exception_class = (jclass)(*env)->NewGlobalRef(env, local);
    (*env)->DeleteLocalRef(env, local);
    if (nccl_exception_class == NULL) {
        return JNI_ERR;
    }
    nccl_exception_ctor = (*env)->GetMethodID(env, nccl_exception_class, "<init>",
                                              "(Ljava/lang/String;ILjava/lang/String;Ljava/lang/String;)V");
    if (nccl_exception_ctor == NULL) {
        return JNI_ERR;
    }
    return JNI_VERSION_1_8;
}

JNIEXPORT jstring JNICALL Java_io_gradsync_nccl_NcclNative_load(JNIEnv *env, jclass cls, jstring jname) {
    (void)cls;
    const char *name = (*env)->GetStringUTFChars(env, jname, NULL);
    if (name == NULL) {
        return NULL; /* OutOfMemoryError pending */
    }
    char message[2048];
    message[0] = '\0';
    if (pthread_mutex_lock(&load_lock) != 0) {
        (*env)->ReleaseStringUTFChars(env, jname, name);
        return new_ascii_string(env, "cannot take the load lock");
    }
    if (nccl_lib == NULL) {
        dlerror();
        /* RTLD_LOCAL: NCCL's symbols stay private to this handle; RTLD_NOW: fail here, not mid-call. */
        void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL) {
            const char *err = dlerror();
            snprintf(message, sizeof message, "%s", err != NULL ? err : "unknown dlopen error");
        } else {
            for (size_t i = 0; i < NCCL_SYMBOL_COUNT; i++) {
                *nccl_symbols[i].slot = dlsym(lib, nccl_symbols[i].name);
            }
            if (nccl.getVersion == NULL) {
                snprintf(message, sizeof message, "%s was opened but exports no ncclGetVersion, so it is not NCCL",
                         name);
                for (size_t i = 0; i < NCCL_SYMBOL_COUNT; i++) {
                    *nccl_symbols[i].slot = NULL;
                }
                dlclose(lib);
            } else {
                nccl_lib = lib;
            }
        }
    }
    pthread_mutex_unlock(&load_lock);
    (*env)->ReleaseStringUTFChars(env, jname, name);
    return message[0] == '\0' ? NULL : new_ascii_string(env, message);
}

JNIEXPORT jstring JNICALL Java_io_gradsync_nccl_NcclNative_loadedPath(JNIEnv *env, jclass cls) {
    (void)cls;
    if (nccl_lib == NULL) {
        return NULL;
    }
    Dl_info info;
    void *addr;
    memcpy(&addr, &nccl.getVersion, sizeof addr);
    if (dladdr(addr, &info) == 0 || info.dli_fname == NULL) {
        return NULL;
    }
    return new_ascii_string(env, info.dli_fname);
}

JNIEXPORT jobjectArray JNICALL Java_io_gradsync_nccl_NcclNative_missingSymbols(JNIEnv *env, jclass cls) {
    (void)cls;
    jclass string_class = (*env)->FindClass(env, "java/lang/String");
    if (string_class == NULL) {
        return NULL;
    }
    jsize missing = 0;
    for (size_t i = 0; i < NCCL_SYMBOL_COUNT; i++) {
        missing += (nccl_lib == NULL || *nccl_symbols[i].slot == NULL) ? 1 : 0;
    }
    jobjectArray out = (*env)->NewObjectArray(env, missing, string_class, NULL);
    if (out == NULL) {
        return NULL;
    }
    jsize k = 0;
    for (size_t i = 0; i < NCCL_SYMBOL_COUNT; i++) {
        if (nccl_lib == NULL || *nccl_symbols[i].slot == NULL) {
            jstring s = new_ascii_string(env, nccl_symbols[i].name);
            if (s == NULL) {
                return NULL;
            }
            (*env)->SetObjectArrayElement(env, out, k++, s);
            (*env)->DeleteLocalRef(env, s);
        }
    }
    return out;
}

JNIEXPORT jint JNICALL Java_io_gradsync_nccl_NcclNative_getVersion(JNIEnv *env, jclass cls) {
    (void)cls;
    if (!need(env, nccl.getVersion, "ncclGetVersion")) {
        return 0;
    }
    int version = 0;
    ncclResult_t r = nccl.getVersion(&version);
    if (r != ncclSuccess) {
        throw_nccl(env, "ncclGetVersion", r, NULL);
        return 0;
    }
    return version;
}

JNIEXPORT jstring JNICALL Java_io_gradsync_nccl_NcclNative_errorString(JNIEnv *env, jclass cls, jint code) {
    (void)cls;
    if (nccl_lib == NULL || nccl.getErrorString == NULL) {
        return NULL;
    }
    return new_ascii_string(env, nccl.getErrorString((ncclResult_t)code));
}

JNIEXPORT jstring JNICALL Java_io_gradsync_nccl_NcclNative_lastError(JNIEnv *env, jclass cls, jlong comm) {
    (void)cls;
    if (!need(env, nccl.getLastError, "ncclGetLastError")) {
        return NULL;
    }
    return new_ascii_string(env, nccl.getLastError(as_comm(comm)));
}

JNIEXPORT jbyteArray JNICALL Java_io_gradsync_nccl_NcclNative_getUniqueId(JNIEnv *env, jclass cls) {
    (void)cls;
    if (!need(env, nccl.getUniqueId, "ncclGetUniqueId")) {
        return NULL;
    }
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    ncclResult_t r = nccl.getUniqueId(&id);
    if (r != ncclSuccess) {
        throw_nccl(env, "ncclGetUniqueId", r, NULL);
        return NULL;
    }
    jbyteArray out = (*env)->NewByteArray(env, NCCL_UNIQUE_ID_BYTES);
    if (out == NULL) {
        return NULL;
    }
    (*env)->SetByteArrayRegion(env, out, 0, NCCL_UNIQUE_ID_BYTES, (const jbyte *)id.internal);
    return out;
}

JNIEXPORT jlongArray JNICALL Java_io_gradsync_nccl_NcclNative_commInitAll(JNIEnv *env, jclass cls,
                                                                         jintArray jdevices) {
    (void)cls;
    if (!need(env, nccl.commInitAll, "ncclCommInitAll")) {
        return NULL;
    }
    jsize n = (*env)->GetArrayLength(env, jdevices);
    int *devices = malloc(sizeof(int) * (size_t)n);
    ncclComm_t *comms = calloc((size_t)n, sizeof(ncclComm_t));
    jlong *handles = malloc(sizeof(jlong) * (size_t)n);
    jlongArray out = NULL;
    if (devices == NULL || comms == NULL || handles == NULL) {
        throw_exception(env, "ncclCommInitAll", NOT_AN_NCCL_RESULT, "out of native memory", NULL);
        goto done;
    }
    (*env)->GetIntArrayRegion(env, jdevices, 0, n, (jint *)devices);
    if ((*env)->ExceptionCheck(env)) {
        goto done;
    }
    ncclResult_t r = nccl.commInitAll(comms, n, devices);
    if (r != ncclSuccess) {
        throw_nccl(env, "ncclCommInitAll", r, NULL);
        goto done;
    }
    for (jsize i = 0; i < n; i++) {
        handles[i] = (jlong)(intptr_t)comms[i];
    }
    out = (*env)->NewLongArray(env, n);
    if (out == NULL) {
        /* Java cannot own these comms, so free them rather than leak NCCL's threads and memory. */
        for (jsize i = 0; i < n; i++) {
            nccl.commDestroy(comms[i]);
        }
        goto done;
    }
    (*env)->SetLongArrayRegion(env, out, 0, n, handles);
done:
    free(devices);
    free(comms);
    free(handles);
    return out;
}

JNIEXPORT jlong JNICALL Java_io_gradsync_nccl_NcclNative_commInitRank(JNIEnv *env, jclass cls, jint device,
                                                                     jint nranks, jbyteArray jid, jint rank) {
    (void)cls;
    if (!need(env, nccl.commInitRank, "ncclCommInitRank")) {
        return 0;
    }
    ncclUniqueId id;
    (*env)->GetByteArrayRegion(env, jid, 0, NCCL_UNIQUE_ID_BYTES, (jbyte *)id.internal);
    if ((*env)->ExceptionCheck(env)) {
        return 0;
    }
    if (device >= 0 && !bind_device(env, device)) {
        return 0;
    }
    ncclComm_t comm = NULL;
    ncclResult_t r = nccl.commInitRank(&comm, nranks, id, rank);
    if (r != ncclSuccess) {
        throw_nccl(env, "ncclCommInitRank", r, NULL);
        release_device(env, device);
        return 0;
    }
    return (jlong)(intptr_t)comm;
}

JNIEXPORT void JNICALL Java_io_gradsync_nccl_NcclNative_allReduce(JNIEnv *env, jclass cls, jlong comm, jlong send,
                                                                 jlong recv, jlong count, jint type, jint op,
                                                                 jlong stream) {
    (void)cls;
    if (!need(env, nccl.allReduce, "ncclAllReduce")) {
        return;
    }
    ncclResult_t r = nccl.allReduce((const void *)(intptr_t)send, (void *)(intptr_t)recv, (size_t)count,
                                    (ncclDataType_t)type, (ncclRedOp_t)op, as_comm(comm),
                                    (cudaStream_t)(intptr_t)stream);
    if (r != ncclSuccess) {
        throw_nccl(env, "ncclAllReduce", r, as_comm(comm));
    }
}

/* The other collectives as allReduce: counts are elements, roots are ranks (not devices). */
JNIEXPORT void JNICALL Java_io_gradsync_nccl_NcclNative_broadcast(JNIEnv *env, jclass cls, jlong comm, jlong send,
                                                                 jlong recv, jlong count, jint type, jint root,
                                                                 jlong stream) {
    (void)cls;
    if (!need(env, nccl.broadcast, "ncclBroadcast")) {
        return;
    }
    ncclResult_t r = nccl.broadcast((const void *)(intptr_t)send, (void *)(intptr_t)recv, (size_t)count,
                                    (ncclDataType_t)type, (int)root, as_comm(comm), (cudaStream_t)(intptr_t)stream);
    if (r != ncclSuccess) {
        throw_nccl(env, "ncclBroadcast", r, as_comm(comm));
    }
}

JNIEXPORT void JNICALL Java_io_gradsync_nccl_NcclNative_reduce(JNIEnv *env, jclass cls, jlong comm, jlong send,
                                                              jlong recv, jlong count, jint type, jint op, jint root,
                                                              jlong stream) {
    (void)cls;
    if (!need(env, nccl.reduce, "ncclReduce")) {
        return;
    }
    ncclResult_t r = nccl.reduce((const void *)(intptr_t)send, (void *)(intptr_t)recv, (size_t)count,
                                 (ncclDataType_t)type, (ncclRedOp_t)op, (int)root, as_comm(comm),
                                 (cudaStream_t)(intptr_t)stream);
    if (r != ncclSuccess) {
        throw_nccl(env, "ncclReduce", r, as_comm(comm));
    }
}

JNIEXPORT void JNICALL Java_io_gradsync_nccl_NcclNative_reduceScatter(JNIEnv *env, jclass cls, jlong comm,
                                                                     jlong send, jlong recv, jlong recvCount,
                                                                     jint type, jint op, jlong stream) {
    (void)cls;
    if (!need(env, nccl.reduceScatter, "ncclReduceScatter")) {
        return;
    }
    ncclResult_t r = nccl.reduceScatter((const void *)(intptr_t)send, (void *)(intptr_t)recv, (size_t)recvCount,
                                        (ncclDataType_t)type, (ncclRedOp_t)op, as_comm(comm),
                                        (cudaStream_t)(intptr_t)stream);
    if (r != ncclSuccess) {
        throw_nccl(env, "ncclReduceScatter", r, as_comm(comm));
    }
}

JNIEXPORT void JNICALL Java_io_gradsync_nccl_NcclNative_allGather(JNIEnv *env, jclass cls, jlong comm, jlong send,
                                                                 jlong recv, jlong sendCount, jint type,
                                                                 jlong stream) {
    (void)cls;
    if (!need(env, nccl.allGather, "ncclAllGather")) {
        return;
    }
    ncclResult_t r = nccl.allGather((const void *)(intptr_t)send, (void *)(intptr_t)recv, (size_t)sendCount,
                                    (ncclDataType_t)type, as_comm(comm), (cudaStream_t)(intptr_t)stream);
    if (r != ncclSuccess) {
        throw_nccl(env, "ncclAllGather", r, as_comm(comm));
    }
}

JNIEXPORT void JNICALL Java_io_gradsync_nccl_NcclNative_groupStart(JNIEnv *env, jclass cls) {
    (void)cls;
    if (!need(env, nccl.groupStart, "ncclGroupStart")) {
        return;
    }
    ncclResult_t r = nccl.groupStart();
    if (r != ncclSuccess) {
        throw_nccl(env, "ncclGroupStart", r, NULL);
    }
}

JNIEXPORT void JNICALL Java_io_gradsync_nccl_NcclNative_groupEnd(JNIEnv *env, jclass cls) {
    (void)cls;
    if (!need(env, nccl.groupEnd, "ncclGroupEnd")) {
        return;
    }
    ncclResult_t r = nccl.groupEnd();
    if (r != ncclSuccess) {
        throw_nccl(env, "ncclGroupEnd", r, NULL);
    }
}

JNIEXPORT void JNICALL Java_io_gradsync_nccl_NcclNative_commFinalize(JNIEnv *env, jclass cls, jlong comm) {
    (void)cls;
    if (!need(env, nccl.commFinalize, "ncclCommFinalize")) {
        return;
    }
    ncclResult_t r = nccl.commFinalize(as_comm(comm));
    if (r != ncclSuccess) {
        throw_nccl(env, "ncclCommFinalize", r, as_comm(comm));
    }
}

JNIEXPORT void JNICALL Java_io_gradsync_nccl_NcclNative_commDestroy(JNIEnv *env, jclass cls, jlong comm,
                                                                   jint device) {
    (void)cls;
    if (!need(env, nccl.commDestroy, "ncclCommDestroy")) {
        return;
    }
    ncclResult_t r = nccl.commDestroy(as_comm(comm));
    if (r != ncclSuccess) {
        /* The comm pointer is no longer usable either way, so read no per-comm error text. */
        throw_nccl(env, "ncclCommDestroy", r, NULL);
    }
    release_device(env, device);
}

JNIEXPORT void JNICALL Java_io_gradsync_nccl_NcclNative_commAbort(JNIEnv *env, jclass cls, jlong comm,
                                                                 jint device) {
    (void)cls;
    if (!need(env, nccl.commAbort, "ncclCommAbort")) {
        return;
    }
    ncclResult_t r = nccl.commAbort(as_comm(comm));
    if (r != ncclSuccess) {
        throw_nccl(env, "ncclCommAbort", r, NULL);
    }
    release_device(env, device);
}

JNIEXPORT jint JNICALL Java_io_gradsync_nccl_NcclNative_commGetAsyncError(JNIEnv *env, jclass cls, jlong comm) {
    (void)cls;
    if (!need(env, nccl.commGetAsyncError, "ncclCommGetAsyncError")) {
        return 0;
    }
    ncclResult_t async = ncclSuccess;
    ncclResult_t r = nccl.commGetAsyncError(as_comm(comm), &async);
    if (r != ncclSuccess) {
        throw_nccl(env, "ncclCommGetAsyncError", r, as_comm(comm));
        return 0;
    }
    return (jint)async;
}

/* ncclCommCount, ncclCommCuDevice and ncclCommUserRank share one shape. */
static jint comm_int_query(JNIEnv *env, ncclResult_t (*fn)(ncclComm_t, int *), const char *name, jlong comm) {
    if (!need(env, fn, name)) {
        return 0;
    }
    int value = 0;
    ncclResult_t r = fn(as_comm(comm), &value);
    if (r != ncclSuccess) {
        throw_nccl(env, name, r, as_comm(comm));
        return 0;
    }
    return value;
}

JNIEXPORT jint JNICALL Java_io_gradsync_nccl_NcclNative_commCount(JNIEnv *env, jclass cls, jlong comm) {
    (void)cls;
    return comm_int_query(env, nccl.commCount, "ncclCommCount", comm);
}

JNIEXPORT jint JNICALL Java_io_gradsync_nccl_NcclNative_commCuDevice(JNIEnv *env, jclass cls, jlong comm) {
    (void)cls;
    return comm_int_query(env, nccl.commCuDevice, "ncclCommCuDevice", comm);
}

JNIEXPORT jint JNICALL Java_io_gradsync_nccl_NcclNative_commUserRank(JNIEnv *env, jclass cls, jlong comm) {
    (void)cls;
    return comm_int_query(env, nccl.commUserRank, "ncclCommUserRank", comm);
}
