#include "engine/common/process_protection.h"

#include <sys/prctl.h>

namespace hiera::engine {

bool make_undumpable() { return ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0; }

}  // namespace hiera::engine
