#include "muon/net/InetAddress.h"

#include <gtest/gtest.h>

using muon::net::InetAddress;

TEST(InetAddress, PortOnlyConstructorGivesAnyOrLoopbackInEitherFamily) {
  EXPECT_EQ(InetAddress(1234).toIpPort(), "0.0.0.0:1234");
  EXPECT_EQ(InetAddress(1234, true).toIpPort(), "127.0.0.1:1234");
  EXPECT_EQ(InetAddress(1234, false, true).toIpPort(), "[::]:1234");
  EXPECT_EQ(InetAddress(1234, true, true).toIpPort(), "[::1]:1234");
  EXPECT_EQ(InetAddress(1234).port(), 1234);
  EXPECT_FALSE(InetAddress(80).isIpv6());
  EXPECT_TRUE(InetAddress(80, false, true).isIpv6());
}

TEST(InetAddress, FromIp) {
  InetAddress a("1.2.3.4", 8888);
  EXPECT_EQ(a.toIp(), "1.2.3.4");
  EXPECT_EQ(a.toIpPort(), "1.2.3.4:8888");
  EXPECT_EQ(a.port(), 8888);
  EXPECT_EQ(a.ipv4NetEndian(), htonl(0x01020304));

  InetAddress b("255.254.253.252", 65535);
  EXPECT_EQ(b.toIpPort(), "255.254.253.252:65535");

  InetAddress c("fe80::1", 80);  // IPv6 recognised without the flag
  EXPECT_TRUE(c.isIpv6());
  EXPECT_EQ(c.toIpPort(), "[fe80::1]:80");
}

TEST(InetAddress, BadIpIsLoggedAndLeavesAnyAddress) {
  InetAddress a("not-an-ip", 80);
  EXPECT_EQ(a.toIpPort(), "0.0.0.0:80");
}

TEST(InetAddress, ParseHostPort) {
  InetAddress a;
  ASSERT_TRUE(InetAddress::parse("127.0.0.1:9000", &a));
  EXPECT_EQ(a, InetAddress(9000, true));
  ASSERT_TRUE(InetAddress::parse("[::1]:443", &a));
  EXPECT_EQ(a, InetAddress(443, true, true));
  EXPECT_FALSE(InetAddress::parse("127.0.0.1", &a));
  EXPECT_FALSE(InetAddress::parse("127.0.0.1:", &a));
  EXPECT_FALSE(InetAddress::parse("127.0.0.1:70000", &a));
  EXPECT_FALSE(InetAddress::parse("127.0.0.1:8x", &a));
  EXPECT_FALSE(InetAddress::parse("::1:80", &a));  // IPv6 needs brackets
  EXPECT_FALSE(InetAddress::parse("host.example:80", &a));
}

TEST(InetAddress, ResolveLocalhost) {
  InetAddress addr(80);
  ASSERT_TRUE(InetAddress::resolve("localhost", &addr));
  EXPECT_EQ(addr.port(), 80);
  EXPECT_TRUE(addr.toIp() == "127.0.0.1" || addr.toIp() == "::1") << addr.toIp();
  InetAddress numeric(7);
  ASSERT_TRUE(InetAddress::resolve("127.0.0.1", &numeric));
  EXPECT_EQ(numeric.toIpPort(), "127.0.0.1:7");
  EXPECT_FALSE(InetAddress::resolve("no-such-host.invalid", &addr));
}

TEST(InetAddress, Equality) {
  EXPECT_EQ(InetAddress("10.0.0.1", 5), InetAddress("10.0.0.1", 5));
  EXPECT_NE(InetAddress("10.0.0.1", 5), InetAddress("10.0.0.1", 6));
  EXPECT_NE(InetAddress("10.0.0.1", 5), InetAddress("10.0.0.2", 5));
  EXPECT_NE(InetAddress(5, true), InetAddress(5, true, true));
}
