// muduo/base/copyable.h for muduo programs built on muon: an empty tag base
// saying "a value type".
#pragma once

namespace muduo {

class copyable {
 protected:
  copyable() = default;
  ~copyable() = default;
};

}  // namespace muduo
