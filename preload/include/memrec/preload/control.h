// The control socket's name, shared by the recorder (preload/control_socket.cpp)
// and `memrec ctl` (analyzer/ctl/): an abstract Unix socket named this prefix
// and the pid in decimal (docs/design/control_channel.md).
#pragma once

#include <string_view>

namespace memrec::preload {

inline constexpr std::string_view kControlSocketPrefix = "memrec-ctl.";

}  // namespace memrec::preload
