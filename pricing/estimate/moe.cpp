#include "pricing/estimate/moe.hpp"

#include <algorithm>

namespace gpucost::pricing::estimate {

int ExpertTensorDegree(const ParallelLayout& l) {
    return l.expert_tensor > 0 ? l.expert_tensor : l.tensor;
}

int ExpertModelShards(const ParallelLayout& l) {
    return ExpertTensorDegree(l) * l.expert;
}

int ExpertDataDegree(const ParallelLayout& l) {
    const long long ranks = static_cast<long long>(l.tensor) * l.data;
    return static_cast<int>(std::max(1LL, ranks / ExpertModelShards(l)));
}

bool ExpertGridDivides(int tensor, int data, int expert, int expert_tensor) {
    if (tensor < 1 || data < 1 || expert < 1 || expert_tensor < 1) return false;
    const long long ranks = static_cast<long long>(tensor) * data;
    return ranks % (static_cast<long long>(expert) * expert_tensor) == 0;
}

int DefaultExpertTensorDegree(int tensor, int data, int expert) {
    if (expert >= 1 && data % expert == 0) return tensor;
    return ExpertGridDivides(tensor, data, expert, 1) ? 1 : 0;
}

}  // namespace gpucost::pricing::estimate
