// muduo/net/Callbacks.h for muduo programs built on muon: the callback
// types and TcpConnectionPtr are muon's (the same signatures); the
// placeholders _1, _2, _3 and get_pointer are in namespace muduo, where
// muduo programs find them.
#pragma once

#include <functional>
#include <memory>

#include "muduo/base/Timestamp.h"
#include "muon/net/Callbacks.h"

namespace muduo {

using std::placeholders::_1;
using std::placeholders::_2;
using std::placeholders::_3;

template <typename T>
inline T* get_pointer(const std::shared_ptr<T>& ptr) {
  return ptr.get();
}

template <typename T>
inline T* get_pointer(const std::unique_ptr<T>& ptr) {
  return ptr.get();
}

template <typename To, typename From>
inline std::shared_ptr<To> down_pointer_cast(const std::shared_ptr<From>& f) {
  return std::static_pointer_cast<To>(f);
}

namespace net {

using muon::net::CloseCallback;
using muon::net::ConnectionCallback;
using muon::net::defaultConnectionCallback;
using muon::net::defaultMessageCallback;
using muon::net::HighWaterMarkCallback;
using muon::net::MessageCallback;
using muon::net::TcpConnectionPtr;
using muon::net::TimerCallback;
using muon::net::WriteCompleteCallback;

}  // namespace net
}  // namespace muduo
