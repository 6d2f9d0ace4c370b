// The data of a RELP `rsp` frame, and the offers in the server's answer to
// `open`. An rsp's data is
//   CODE [SP HUMAN-TEXT] [LF COMMAND-DATA]
// CODE three digits (200 accepted, anything else refused); the answer to
// `open` carries the server's offers as its command data, one a line:
//   relp_version=0 LF relp_software=rsyslogd,... LF commands=syslog
// The answer to `close` may have no data at all (librelp sends none).
// Pure functions over the bytes given, any thread.
#pragma once

#include <string_view>

namespace muon {
namespace net {
namespace relp {

struct RelpResponse {
  int code = 0;                  // 100..999; 200 is "accepted"
  std::string_view text;         // the human-readable text, without LF
  std::string_view commandData;  // after the first LF, may be empty
};

// Parses an rsp's data into *out (views into `data`). False if it does not
// start with three digits followed by the end, SP or LF, or if the code
// starts with 0.
bool parseResponse(std::string_view data, RelpResponse* out);

// Whether the offers (LF-separated "name[=value,value...]" lines) include
// `name`, and, if `value` is not empty, that value among its values.
bool hasOffer(std::string_view offers, std::string_view name, std::string_view value = {});

}  // namespace relp
}  // namespace net
}  // namespace muon
