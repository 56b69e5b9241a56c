#pragma once
// What hiera and its worker do first, as ssh-agent does: mark the process not
// dumpable, so that other processes of the same user (a candidate among them)
// cannot read its /proc/PID/environ or memory, where API keys live, nor
// attach a debugger; no core file carries them either. exec resets the flag,
// so each executable calls this itself.
namespace hiera::engine {

// prctl(PR_SET_DUMPABLE, 0). False when the kernel refused (the process runs on unprotected).
bool make_undumpable();

}  // namespace hiera::engine
