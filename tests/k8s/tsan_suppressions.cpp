// ThreadSanitizer suppressions built into the k8s test binaries (read by the TSan runtime at start;
// a plain unused function in other builds).
//
// libcpprest.so (Debian's) is not instrumented, yet its objects are shared with instrumented
// header code (shared_ptr counts, pplx tasks, cancellation tokens): TSan then sees a pool thread
// freeing what another thread used but not the atomic reference counting that orders the two, and
// reports races that cannot happen. A failed request's exception is the same story: it reaches the
// waiting thread as an exception_ptr counted in (uninstrumented) libsupc++. Only stacks through
// cpprest are silenced; races in our own code are still reported.
extern "C" const char* __tsan_default_suppressions() {
  return "race:libcpprest.so\n"
         "race:pplx::details::_ExceptionHolder::~_ExceptionHolder\n";
}
