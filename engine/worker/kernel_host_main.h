#pragma once
// The kernel host itself (`hiera-worker --kernel-host --device N --parent
// PID`, started by KernelHost): puts its sandbox in force, opens the GPU,
// says "ready" with what is in force, then serves load / map / launch on
// stdin and stdout until "exit" or the end of input. It holds the candidate
// and the IPC mappings of its argument buffers, nothing else of the worker's.
#include <sys/types.h>

namespace hiera::engine::worker {

// The process's exit code.
int run_kernel_host(int device, pid_t parent);

}  // namespace hiera::engine::worker
