#pragma once
// Clang's thread-safety annotations (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html).
//
// The rule: every member a mutex guards is declared GTE_GUARDED_BY that mutex (a gte::Mutex,
// base/mutex.h), and every private helper that runs with it held is declared GTE_REQUIRES it.
// Clang (-Wthread-safety, on in the clang builds, where warnings are errors) then proves at compile
// time that each such member is read and written only with its mutex held. GCC ignores the
// annotations: they expand to nothing there.
//
// A lambda that reads guarded members while the lock is held (a condition variable's predicate)
// is declared `[this]() GTE_REQUIRES(mutex_) {...}`; where the lambda is called from a template
// of ours clang cannot see the lock held, and only there a narrowly scoped
// GTE_NO_THREAD_SAFETY_ANALYSIS, with a comment saying why, turns the check off.

#if defined(__clang__)
#define GTE_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define GTE_THREAD_ANNOTATION(x)
#endif

// A class that is a capability (a mutex): `class GTE_CAPABILITY("mutex") Mutex`.
#define GTE_CAPABILITY(x) GTE_THREAD_ANNOTATION(capability(x))
// An RAII class that acquires a capability in its constructor and releases it in its destructor.
#define GTE_SCOPED_CAPABILITY GTE_THREAD_ANNOTATION(scoped_lockable)
// The member may be read or written only with `x` held.
#define GTE_GUARDED_BY(x) GTE_THREAD_ANNOTATION(guarded_by(x))
// The pointer member's pointee may be read or written only with `x` held.
#define GTE_PT_GUARDED_BY(x) GTE_THREAD_ANNOTATION(pt_guarded_by(x))
// The function must be called with the capabilities held (and leaves them held).
#define GTE_REQUIRES(...) GTE_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// The function acquires the capabilities (none named: `this`, or a scoped capability's own).
#define GTE_ACQUIRE(...) GTE_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
// The function releases the capabilities (none named: `this`, or a scoped capability's own).
#define GTE_RELEASE(...) GTE_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
// The function acquires the capabilities when it returns the first argument (true for try_lock).
#define GTE_TRY_ACQUIRE(...) GTE_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// The function must be called without the capabilities held (it takes them itself).
#define GTE_EXCLUDES(...) GTE_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// Turns the analysis off for one function (or lambda): only with a comment saying why.
#define GTE_NO_THREAD_SAFETY_ANALYSIS GTE_THREAD_ANNOTATION(no_thread_safety_analysis)
