// The RELP frame encoder, the incremental frame parser and the rsp data
// parser (net/relp/): frames survive every split of their bytes, hostile
// lengths and bytes are errors at the byte that makes them so, never reads
// or allocations beyond the limits.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "muon/net/relp/RelpFrame.h"
#include "muon/net/relp/RelpParser.h"
#include "muon/net/relp/RelpResponse.h"

using muon::net::relp::encodeFrame;
using muon::net::relp::hasOffer;
using muon::net::relp::kMaxTxnr;
using muon::net::relp::nextTxnr;
using muon::net::relp::parseResponse;
using muon::net::relp::RelpFrameData;
using muon::net::relp::RelpParser;
using muon::net::relp::RelpResponse;
using muon::net::relp::txnrDistance;

namespace {

using Status = RelpParser::Status;
using Error = RelpParser::Error;

struct Outcome {
  std::vector<RelpFrameData> frames;
  Error error = Error::kNone;
  uint64_t errorOffset = 0;
};

// Feeds `stream` in pieces cut at `cuts` (ascending offsets).
Outcome feed(const std::string& stream, const std::vector<size_t>& cuts,
             size_t maxData = RelpParser::kDefaultMaxDataLength) {
  RelpParser parser(maxData);
  Outcome out;
  size_t begin = 0;
  std::vector<size_t> ends = cuts;
  ends.push_back(stream.size());
  for (size_t end : ends) {
    while (begin < end) {
      size_t consumed = 0;
      Status s = parser.parse(stream.data() + begin, end - begin, &consumed);
      EXPECT_LE(consumed, end - begin);
      begin += consumed;
      if (s == Status::kFrame) {
        out.frames.push_back(parser.frame());
      } else if (s == Status::kError) {
        out.error = parser.error();
        out.errorOffset = parser.offset();
        return out;
      } else {
        EXPECT_EQ(begin, end);
      }
    }
  }
  return out;
}

bool sameFrames(const std::vector<RelpFrameData>& a, const std::vector<RelpFrameData>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].txnr != b[i].txnr || a[i].command != b[i].command || a[i].data != b[i].data) return false;
  }
  return true;
}

TEST(RelpFrame, EncodesHeaderDataAndTrailer) {
  EXPECT_EQ(encodeFrame(1, "open", "relp_version=0"), "1 open 14 relp_version=0\n");
  EXPECT_EQ(encodeFrame(7, "close", ""), "7 close 0\n");
  EXPECT_EQ(encodeFrame(999999999, "syslog", "a\nb"), "999999999 syslog 3 a\nb\n");
  EXPECT_EQ(nextTxnr(1), 2u);
  EXPECT_EQ(nextTxnr(kMaxTxnr), 1u);
}

TEST(RelpFrame, TxnrDistanceFollowsTheWrap) {
  EXPECT_EQ(txnrDistance(2, 2), 0u);
  EXPECT_EQ(txnrDistance(2, 130), 128u);
  EXPECT_EQ(txnrDistance(kMaxTxnr, 1), 1u);
  EXPECT_EQ(txnrDistance(kMaxTxnr - 1, 3), 4u);
  EXPECT_EQ(txnrDistance(5, 4), kMaxTxnr - 1);  // behind the window: far beyond it
  uint32_t t = kMaxTxnr - 3;
  for (uint32_t steps = 0; steps < 10; ++steps, t = nextTxnr(t)) {
    EXPECT_EQ(txnrDistance(kMaxTxnr - 3, t), steps);
  }
}

TEST(RelpParser, EverySplitOfAStreamGivesTheSameFrames) {
  std::string stream = encodeFrame(1, "rsp", "200 OK\nrelp_version=0\ncommands=syslog") +
                       encodeFrame(0, "serverclose", "") + encodeFrame(2, "rsp", "200 OK") +
                       encodeFrame(999999999, "rsp", std::string(300, 'x') + "\n\n ");
  Outcome whole = feed(stream, {});
  ASSERT_EQ(whole.error, Error::kNone);
  ASSERT_EQ(whole.frames.size(), 4u);
  EXPECT_EQ(whole.frames[0].txnr, 1u);
  EXPECT_EQ(whole.frames[0].command, "rsp");
  EXPECT_EQ(whole.frames[0].data, "200 OK\nrelp_version=0\ncommands=syslog");
  EXPECT_EQ(whole.frames[1].command, "serverclose");
  EXPECT_EQ(whole.frames[1].data, "");
  EXPECT_EQ(whole.frames[3].txnr, 999999999u);
  // Every cut into two pieces, and every cut into three.
  for (size_t i = 0; i <= stream.size(); ++i) {
    ASSERT_TRUE(sameFrames(feed(stream, {i}).frames, whole.frames)) << "cut at " << i;
  }
  for (size_t i = 0; i <= stream.size(); i += 3) {
    for (size_t j = i; j <= stream.size(); j += 5) {
      ASSERT_TRUE(sameFrames(feed(stream, {i, j}).frames, whole.frames)) << "cuts " << i << "," << j;
    }
  }
  // One byte at a time.
  std::vector<size_t> bytes;
  for (size_t i = 1; i < stream.size(); ++i) bytes.push_back(i);
  EXPECT_TRUE(sameFrames(feed(stream, bytes).frames, whole.frames));
}

TEST(RelpParser, StopsAfterEachFrameAndLeavesTheRest) {
  std::string stream = encodeFrame(3, "rsp", "200 OK") + "4 rsp";
  RelpParser parser;
  size_t consumed = 0;
  ASSERT_EQ(parser.parse(stream.data(), stream.size(), &consumed), Status::kFrame);
  EXPECT_EQ(consumed, encodeFrame(3, "rsp", "200 OK").size());
  EXPECT_EQ(parser.frame().txnr, 3u);
  size_t more = 0;
  EXPECT_EQ(parser.parse(stream.data() + consumed, stream.size() - consumed, &more), Status::kNeedMore);
  EXPECT_EQ(consumed + more, stream.size());
}

struct BadCase {
  const char* bytes;
  Error error;
  size_t offset;  // bytes taken, the bad one included
};

TEST(RelpParser, MalformedStreamsAreErrorsAtTheirBadByte) {
  const BadCase cases[] = {
      {"x rsp 0\n", Error::kBadTxnr, 1},
      {" rsp 0\n", Error::kBadTxnr, 1},
      {"1234567890 rsp 0\n", Error::kBadTxnr, 10},  // ten digits
      {"1-rsp 0\n", Error::kBadTxnr, 2},
      {"1  0\n", Error::kBadCommand, 3},           // empty command
      {"1 rs1 0\n", Error::kBadCommand, 5},
      {"1 abcdefghijklmnopqrstuvwxyzabcdefg 0\n", Error::kBadCommand, 35},  // 33 letters
      {"1 rsp \n", Error::kBadDataLength, 7},
      {"1 rsp x\n", Error::kBadDataLength, 7},
      {"1 rsp 0000000001 x\n", Error::kBadDataLength, 16},  // ten digits
      {"1 rsp 0000000000\n", Error::kBadDataLength, 16},
      {"1 rsp 0 \n", Error::kBadTrailer, 8},  // no data: LF at once
      {"1 rsp 3\nabc\n", Error::kBadSeparator, 8},
      {"1 rsp 3 abcd\n", Error::kBadTrailer, 12},
      {"1 rsp 200000 ", Error::kDataTooLong, 12},  // 200000 > 128 KiB, at its last digit
      {"1 rsp 999999999 ", Error::kDataTooLong, 12},
  };
  for (const BadCase& c : cases) {
    std::string stream = c.bytes;
    Outcome whole = feed(stream, {});
    EXPECT_EQ(whole.error, c.error) << stream;
    EXPECT_EQ(whole.errorOffset, c.offset) << stream;
    EXPECT_TRUE(whole.frames.empty()) << stream;
    for (size_t i = 0; i <= stream.size(); ++i) {
      Outcome split = feed(stream, {i});
      EXPECT_EQ(split.error, c.error) << stream << " cut at " << i;
      EXPECT_EQ(split.errorOffset, c.offset) << stream << " cut at " << i;
    }
  }
}

TEST(RelpParser, AnErrorIsFinalUntilReset) {
  RelpParser parser;
  size_t consumed = 0;
  ASSERT_EQ(parser.parse("garbage", 7, &consumed), Status::kError);
  EXPECT_EQ(consumed, 1u);
  const std::string good = encodeFrame(1, "rsp", "200 OK");
  EXPECT_EQ(parser.parse(good.data(), good.size(), &consumed), Status::kError);
  EXPECT_EQ(consumed, 0u);
  parser.reset();
  EXPECT_EQ(parser.parse(good.data(), good.size(), &consumed), Status::kFrame);
  EXPECT_EQ(parser.frame().data, "200 OK");
}

TEST(RelpParser, TheDataLimitIsTheCallersAndExactLengthsPass) {
  const std::string atLimit = encodeFrame(1, "rsp", std::string(100, 'a'));
  Outcome ok = feed(atLimit, {}, 100);
  ASSERT_EQ(ok.frames.size(), 1u);
  EXPECT_EQ(ok.frames[0].data.size(), 100u);
  Outcome over = feed(encodeFrame(1, "rsp", std::string(101, 'a')), {}, 100);
  EXPECT_EQ(over.error, Error::kDataTooLong);
  EXPECT_EQ(over.errorOffset, 9u);  // "1 rsp 101": at the third digit
}

TEST(RelpResponse, CodesTextAndCommandData) {
  RelpResponse r;
  ASSERT_TRUE(parseResponse("200 OK", &r));
  EXPECT_EQ(r.code, 200);
  EXPECT_EQ(r.text, "OK");
  EXPECT_EQ(r.commandData, "");
  ASSERT_TRUE(parseResponse("200 OK\nrelp_version=0\nrelp_software=rsyslogd\ncommands=syslog", &r));
  EXPECT_EQ(r.commandData, "relp_version=0\nrelp_software=rsyslogd\ncommands=syslog");
  ASSERT_TRUE(parseResponse("500", &r));
  EXPECT_EQ(r.code, 500);
  EXPECT_EQ(r.text, "");
  ASSERT_TRUE(parseResponse("500\nx", &r));
  EXPECT_EQ(r.commandData, "x");
  for (const char* bad : {"", "20", "2x0 OK", "020 OK", "2000 OK", "OK 200", " 200"}) {
    EXPECT_FALSE(parseResponse(bad, &r)) << bad;
  }
}

TEST(RelpResponse, OffersAreFoundByNameAndValue) {
  const std::string offers = "relp_version=0\nrelp_software=rsyslogd,8.2302.0\ncommands=eventlog,syslog\r\n";
  EXPECT_TRUE(hasOffer(offers, "relp_version"));
  EXPECT_TRUE(hasOffer(offers, "commands", "syslog"));
  EXPECT_TRUE(hasOffer(offers, "commands", "eventlog"));
  EXPECT_FALSE(hasOffer(offers, "commands", "sys"));
  EXPECT_FALSE(hasOffer(offers, "relp"));
  EXPECT_FALSE(hasOffer("commands=syslogx", "commands", "syslog"));
  EXPECT_FALSE(hasOffer("", "relp_version"));
}

}  // namespace
