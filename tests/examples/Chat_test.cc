// chat_server and chat_server_threaded: a message from one client reaches
// the other three, every message in the order sent; a bad length header
// closes the connection. chat_client: lines typed in one reach the other,
// and the end of its stdin ends it after the server's last message.
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ChildProgram.h"
#include "NetTestUtil.h"

using namespace muon::net::test;
using muon::test::ChildProgram;

namespace {

void sendFrame(int fd, const std::string& message) {
  const auto len = static_cast<uint32_t>(message.size());
  const unsigned char header[4] = {static_cast<unsigned char>(len >> 24), static_cast<unsigned char>(len >> 16),
                                   static_cast<unsigned char>(len >> 8), static_cast<unsigned char>(len)};
  std::string frame(reinterpret_cast<const char*>(header), 4);
  frame += message;
  ASSERT_TRUE(writeAll(fd, frame.data(), frame.size()));
}

// The next message, or "<none>" if none came whole within 20 s.
std::string readFrame(int fd) {
  unsigned char header[4];
  if (!readExactly(fd, header, 4)) return "<none>";
  const size_t len = size_t{header[0]} << 24 | size_t{header[1]} << 16 | size_t{header[2]} << 8 | header[3];
  std::string message(len, '\0');
  if (len > 0 && !readExactly(fd, message.data(), len)) return "<none>";
  return message;
}

class Chat : public ::testing::TestWithParam<std::vector<std::string>> {};

}  // namespace

TEST_P(Chat, RelaysEveryMessageToEveryClientInOrder) {
  const std::string program = GetParam()[0];
  ChildProgram server(program, std::vector<std::string>(GetParam().begin() + 1, GetParam().end()));
  const uint16_t port = server.port();
  ASSERT_NE(port, 0);
  // Each client says hello and waits for its own hello to come back: then
  // the server has it in the room, and every earlier client hears it too.
  std::vector<int> clients;
  for (int i = 0; i < 4; ++i) {
    const int fd = connectTo(loopback(port));
    ASSERT_GE(fd, 0);
    clients.push_back(fd);
    sendFrame(fd, "hello " + std::to_string(i));
    for (int j = 0; j <= i; ++j) ASSERT_EQ(readFrame(clients[static_cast<size_t>(j)]), "hello " + std::to_string(i));
  }
  // 200 messages from client 0, of many sizes (some over one read's worth).
  std::vector<std::string> sent;
  for (size_t i = 0; i < 200; ++i) {
    sent.push_back(std::to_string(i) + ":" + makePattern(i * 97 % 5000, static_cast<uint32_t>(i)));
  }
  std::thread sender([&] {
    for (const std::string& m : sent) sendFrame(clients[0], m);
  });
  for (size_t c = 0; c < clients.size(); ++c) {
    size_t i = 0;
    std::string got;
    while (i < sent.size() && (got = readFrame(clients[c])) == sent[i]) ++i;
    EXPECT_EQ(i, sent.size()) << "client " << c << " got " << got.substr(0, got.find(':'));
    if (i < sent.size()) break;
  }
  // Shut down first: that wakes a sender blocked on a full socket.
  for (int fd : clients) ::shutdown(fd, SHUT_RDWR);
  sender.join();
  for (int fd : clients) ::close(fd);
  EXPECT_TRUE(server.stopsCleanly());
}

TEST_P(Chat, ABadLengthHeaderClosesTheConnection) {
  const std::string program = GetParam()[0];
  ChildProgram server(program, std::vector<std::string>(GetParam().begin() + 1, GetParam().end()));
  const uint16_t port = server.port();
  ASSERT_NE(port, 0);
  const int fd = connectTo(loopback(port));
  ASSERT_GE(fd, 0);
  const char tooLong[4] = {0x7f, 0, 0, 0};
  ASSERT_TRUE(writeAll(fd, tooLong, sizeof tooLong));
  EXPECT_TRUE(readsEof(fd));
  ::close(fd);
  EXPECT_TRUE(server.stopsCleanly());
}

INSTANTIATE_TEST_SUITE_P(OneLoopAndThreeLoops, Chat,
                         ::testing::Values(std::vector<std::string>{"chat_server", "0"},
                                           std::vector<std::string>{"chat_server_threaded", "0", "3"}),
                         [](const ::testing::TestParamInfo<std::vector<std::string>>& param) {
                           return param.param[0];
                         });

TEST(ChatClient, LinesGoThroughTheRoomAndTheEndOfStdinEndsTheClient) {
  ChildProgram server("chat_server", {"0"});
  const std::string port = std::to_string(server.port());
  ASSERT_NE(port, "0");
  ChildProgram listener("chat_client", {"127.0.0.1", port}, true);
  ASSERT_TRUE(listener.waitForOutput("chat_client connected to ")) << listener.output();
  ChildProgram talker("chat_client", {"127.0.0.1", port}, true);
  ASSERT_TRUE(talker.waitForOutput("chat_client connected to ")) << talker.output();
  ASSERT_TRUE(talker.writeStdin("hello room\nsecond line\n"));
  EXPECT_TRUE(listener.waitForOutput("<<< hello room\n<<< second line\n")) << listener.output();
  // The talker half-closes at the end of its stdin; the server still sends
  // it its own two lines, then closes, and the talker exits.
  talker.closeStdin();
  EXPECT_EQ(talker.wait(), 0) << talker.output();
  EXPECT_EQ(talker.count("<<< hello room\n<<< second line\n"), 1u) << talker.output();
  EXPECT_TRUE(listener.stopsCleanly());
  EXPECT_TRUE(server.stopsCleanly());
}
