#pragma once
// The policy network's forward pass in plain C++: the torso and policy head
// of impala.py's Network (two tanh layers of `hidden` units, then 2 logits),
// from the flat float32 array Network.policy_parameters() makes: each
// layer's weight (out x in, row-major, as torch.nn.Linear keeps it), then its
// bias, torso first.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace agent {

class mlp_policy {
 public:
  static constexpr std::size_t inputs = 4, outputs = 2;

  mlp_policy() = default;
  // Throws std::invalid_argument if `flat` is not a network of this shape.
  mlp_policy(const std::vector<float>& flat, long version) : version_(version) {
    // inputs*h + h + h*h + h + h*outputs + outputs = h^2 + 8h + 2 floats.
    std::size_t h = 0;
    while ((h + 1) * (h + 1) + 8 * (h + 1) + 2 <= flat.size()) ++h;
    if (h == 0 || h * h + 8 * h + 2 != flat.size())
      throw std::invalid_argument(
          "mlp_policy: " + std::to_string(flat.size()) +
          " floats are no network of 4 inputs, 2 tanh layers and 2 outputs");
    hidden_ = h;
    const float* p = flat.data();
    // Kept transposed (in x out): the inner loops then run along a row
    // of outputs, which the compiler vectorizes without reordering sums.
    auto layer = [&](std::size_t in, std::size_t out, std::vector<float>& w,
                     std::vector<float>& b) {
      w.assign(in * out, 0.f);
      for (std::size_t o = 0; o < out; ++o)
        for (std::size_t i = 0; i < in; ++i) w[i * out + o] = *p++;
      b.assign(p, p + out);
      p += out;
    };
    layer(inputs, h, w1_, b1_);
    layer(h, h, w2_, b2_);
    layer(h, outputs, w3_, b3_);
  }

  bool empty() const { return hidden_ == 0; }
  long version() const { return version_; }

  // The probability of each action for each of `n` observations (4 floats
  // each, one after another): 2 floats per observation into `out`.
  void probabilities(const float* observations, std::size_t n, float* out) const {
    std::vector<float> h1(hidden_), h2(hidden_);
    for (std::size_t k = 0; k < n; ++k) {
      const float* x = observations + k * inputs;
      dense(x, inputs, w1_, b1_, h1.data(), hidden_);
      tanh_all(h1.data(), hidden_);
      dense(h1.data(), hidden_, w2_, b2_, h2.data(), hidden_);
      tanh_all(h2.data(), hidden_);
      float logits[outputs] = {};
      dense(h2.data(), hidden_, w3_, b3_, logits, outputs);
      float top = std::max(logits[0], logits[1]);
      float e0 = std::exp(logits[0] - top), e1 = std::exp(logits[1] - top);
      out[2 * k] = e0 / (e0 + e1);
      out[2 * k + 1] = e1 / (e0 + e1);
    }
  }

 private:
  // tanh of each value, as a rational function (Eigen's float tanh,
  // within a few ulp of std::tanh): a loop the compiler vectorizes, where
  // std::tanh's calls took 80% of the forward pass.
  static void tanh_all(float* v, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      float x = std::clamp(v[i], -7.90531110763549805f, 7.90531110763549805f);
      float x2 = x * x;
      float p = -2.76076847742355e-16f;
      p = p * x2 + 2.00018790482477e-13f;
      p = p * x2 - 8.60467152213735e-11f;
      p = p * x2 + 5.12229709037114e-08f;
      p = p * x2 + 1.48572235717979e-05f;
      p = p * x2 + 6.37261928875436e-04f;
      p = p * x2 + 4.89352455891786e-03f;
      float q = 1.19825839466702e-06f;
      q = q * x2 + 1.18534705686654e-04f;
      q = q * x2 + 2.26843463243900e-03f;
      q = q * x2 + 4.89352518554385e-03f;
      v[i] = x * p / q;
    }
  }

  static void dense(const float* __restrict x, std::size_t in,
                    const std::vector<float>& w, const std::vector<float>& b,
                    float* __restrict y, std::size_t out) {
    std::copy(b.begin(), b.end(), y);
    for (std::size_t i = 0; i < in; ++i) {
      const float xi = x[i];
      const float* row = w.data() + i * out;
      for (std::size_t o = 0; o < out; ++o) y[o] += xi * row[o];
    }
  }

  std::size_t hidden_ = 0;
  long version_ = -1;
  std::vector<float> w1_, b1_, w2_, b2_, w3_, b3_;
};

}  // namespace agent
