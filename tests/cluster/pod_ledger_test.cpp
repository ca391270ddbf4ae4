// The PodLedger keeps each node's charges as pods and reservations come and go: the usage is
// right after every add and remove without recomputing the node, a label change only flips which
// pods are counted, and a bound pod takes over its reservation's charge.
#include "cluster/pod_ledger.h"

#include <catch2/catch_test_macros.hpp>
#include <string>
#include <vector>

#include "cluster_test_support.h"

using gte::Allocation;
using gte::cluster::LedgerPod;
using gte::cluster::LedgerReservation;
using gte::cluster::PodLedger;
using gte::testing::gpuPod;

namespace {

LedgerPod boundPod(const std::string& uid, const std::string& node, std::vector<int> gpus,
                   std::int64_t boundAt = 100) {
  LedgerPod pod;
  pod.pod = gpuPod(uid, static_cast<std::int64_t>(gpus.size()), node);
  pod.boundAt = boundAt;
  pod.allocation = Allocation{true, std::move(gpus), {}};
  return pod;
}

}  // namespace

TEST_CASE("PodLedger: usage follows pods and reservations as they come and go") {
  PodLedger ledger;
  ledger.putPod("a", boundPod("a", "n1", {0, 1}));
  ledger.putPod("b", boundPod("b", "n1", {4}));
  CHECK(ledger.charges("n1").usage().gpus == std::vector<int>{0, 1, 4});

  ledger.putReservation(
      "r", LedgerReservation{gpuPod("r", 1), "n1", Allocation{true, {5}, {}}, 100, {}});
  CHECK(ledger.charges("n1").usage().gpus == std::vector<int>{0, 1, 4, 5});
  CHECK(ledger.podsOn("n1").size() == 3);

  CHECK(ledger.erasePod("a") == std::string("n1"));
  CHECK(ledger.charges("n1").usage().gpus == std::vector<int>{4, 5});
  CHECK(ledger.eraseReservation("r") == std::string("n1"));
  CHECK(ledger.charges("n1").usage().gpus == std::vector<int>{4});
  CHECK_FALSE(ledger.erasePod("zzz").has_value());
  CHECK(ledger.charges("elsewhere").empty());
}

TEST_CASE("PodLedger: a pod moving nodes leaves its old node's charges") {
  PodLedger ledger;
  ledger.putPod("a", boundPod("a", "n1", {0}));
  CHECK(ledger.putPod("a", boundPod("a", "n2", {3})) == std::string("n1"));
  CHECK(ledger.charges("n1").empty());
  CHECK(ledger.charges("n2").usage().gpus == std::vector<int>{3});
}

TEST_CASE("PodLedger: a label change flips which pods are counted, keeping their devices") {
  PodLedger ledger;
  ledger.putPod("old", boundPod("old", "n1", {0}, 50));
  ledger.putPod("new", boundPod("new", "n1", {1}, 150));
  // Labels written at 100 cover the pod bound at 50, not the one bound at 150.
  ledger.recount("n1", [](const LedgerPod& pod) { return pod.boundAt >= 100; });
  CHECK(ledger.charges("n1").usage().gpus == std::vector<int>{1});
  REQUIRE(ledger.charges("n1").find("old") != nullptr);
  CHECK_FALSE(ledger.charges("n1").find("old")->counted);  // kept for preempt's release
  ledger.recount("n1", [](const LedgerPod&) { return true; });
  CHECK(ledger.charges("n1").usage().gpus.size() == 2);
}

TEST_CASE("PodLedger: counted pods without devices wait for a prediction, in bind order") {
  PodLedger ledger;
  LedgerPod late = boundPod("late", "n1", {}, 300);
  late.allocation.reset();
  LedgerPod early = boundPod("early", "n1", {}, 200);
  early.allocation.reset();
  ledger.putPod("late", late);
  ledger.putPod("early", early);
  CHECK(ledger.unpredicted("n1") == std::vector<std::string>{"early", "late"});
  CHECK(ledger.charges("n1").empty());
  ledger.setAllocation("early", Allocation{true, {2}, {}}, 0);
  CHECK(ledger.unpredicted("n1") == std::vector<std::string>{"late"});
  CHECK(ledger.charges("n1").usage().gpus == std::vector<int>{2});
}

TEST_CASE("PodLedger: a bound pod keeps the charge of the reservation it came from") {
  PodLedger ledger;
  ledger.putReservation(
      "p", LedgerReservation{gpuPod("p", 1), "n1", Allocation{true, {6}, {}}, 100, {}});
  ledger.putPod("p", boundPod("p", "n1", {6}));
  ledger.eraseReservation("p");
  CHECK(ledger.charges("n1").usage().gpus == std::vector<int>{6});
  CHECK(ledger.reservationCount() == 0);
  CHECK(ledger.podCount() == 1);
}
