// Kernel names to pattern families.
#include "engine/plan/kernel_families.h"

#include <gtest/gtest.h>

namespace hiera::engine::plan {
namespace {

TEST(KernelFamiliesTest, LibraryKernelsByName) {
  EXPECT_EQ(kernel_family("cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x256x64_1x2x1_0_tnt_align8"), "gemm");
  EXPECT_EQ(kernel_family("void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(Params)"), "gemm");
  EXPECT_EQ(kernel_family("nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NNT"), "gemm");
  EXPECT_EQ(kernel_family("void gemmSN_TN_kernel<float, 128, 16, 2, 4, 4, 4, true>(cublasGemmSmallNParams)"), "gemm");
  EXPECT_EQ(kernel_family("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_execute_kernel__5x_cublas"),
            "gemm");
  EXPECT_EQ(kernel_family("void cublasLt::splitKreduce_kernel<32, 16, int, float>"), "gemm");
  EXPECT_EQ(kernel_family("void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4>"), "gemm");
  EXPECT_EQ(kernel_family("cutlass_gemm_batched_f16_128x128"), "batched_gemm");
  EXPECT_EQ(kernel_family("void at::native::bmm_kernel<float>"), "batched_gemm");
  EXPECT_EQ(kernel_family("sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc"), "conv");
  EXPECT_EQ(kernel_family("void cudnn::detail::implicit_convolve_sgemm<float, float, 128, 5, 5>"), "conv");
  EXPECT_EQ(kernel_family("void at::native::conv_depthwise2d_forward_kernel<float>"), "conv");
  EXPECT_EQ(kernel_family("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64>>"), "attention");
  EXPECT_EQ(kernel_family("fmha_cutlassF_f16_aligned_64x64_rf_sm80"), "attention");
  EXPECT_EQ(kernel_family("void (anonymous namespace)::cunn_SoftMaxForward<4, float, float, float>"), "softmax");
  EXPECT_EQ(kernel_family("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>"), "norm");
  EXPECT_EQ(kernel_family("void at::native::batch_norm_collect_statistics_kernel<float>"), "norm");
  EXPECT_EQ(kernel_family("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>"), "norm");
  EXPECT_EQ(kernel_family("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, MeanOps>>"), "reduction");
  EXPECT_EQ(kernel_family("triton_red_fused_sum_0"), "reduction");
  EXPECT_EQ(kernel_family("triton_per_fused_softmax_1"), "softmax");
  EXPECT_EQ(kernel_family("void at::native::elementwise_kernel<128, 2, direct_copy_kernel_cuda(TensorIteratorBase&)>"),
            "copy_transpose");
  EXPECT_EQ(kernel_family("Memcpy DtoD (Device -> Device)"), "copy_transpose");
  EXPECT_EQ(kernel_family("void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 3>"),
            "copy_transpose");
  EXPECT_EQ(kernel_family("void at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>>"),
            "elementwise_chain");
  EXPECT_EQ(kernel_family("void at::native::unrolled_elementwise_kernel<GeluCUDAKernelImpl>"), "elementwise_chain");
  EXPECT_EQ(kernel_family("triton_poi_fused_convert_element_type_gelu_0"), "elementwise_chain");
}

TEST(KernelFamiliesTest, AUsersOwnKernelHasNoFamily) {
  EXPECT_EQ(kernel_family("laplacian7"), std::nullopt);
  EXPECT_EQ(kernel_family("saxpy"), std::nullopt);
  EXPECT_EQ(kernel_family(""), std::nullopt);
}

}  // namespace
}  // namespace hiera::engine::plan
