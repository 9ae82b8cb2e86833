#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/node_dyncfg.h"
#include "value_helpers.h"

#define EPYC "AMD EPYC 7702 64-Core Processor"

static double factor(const char *config, double static_factor, const char *model)
{
    struct ps_value v = json(config);
    struct ps_error err;
    ps_error_init(&err);
    if (ps_node_dyncfg_check(&v, &err) != 0)
        fail_msg("%s: %s", config, err.msg);
    double f = ps_node_dyncfg_cpu_to_vcpu_factor(ps_node_dyncfg_for_node(&v), static_factor, model);
    ps_value_release(&v);
    return f;
}

static void test_resolution(void **state)
{
    (void)state;
    /* TestReplacementCpuToVCpu: enabled, the cpu model's factor */
    assert_true(factor("{\"%true\": {\"job_resource_manager\": {\"enable_cpu_to_vcpu_factor\": "
                       "true, \"cpu_model_to_cpu_to_vcpu_factor\": {\"" EPYC "\": 1.21}}}}", 0,
                       EPYC) == 1.21);
    /* test_factor_from_dynamic_config: an explicit factor wins over the model's */
    assert_true(factor("{\"%true\": {\"job_resource_manager\": {\"enable_cpu_to_vcpu_factor\": "
                       "true, \"cpu_to_vcpu_factor\": 1.21, \"cpu_model_to_cpu_to_vcpu_factor\":"
                       " {\"" EPYC "\": 10}}}}", 0, EPYC) == 1.21);
    /* test_one_cpu_to_vcpu_factor: not enabled, 1 */
    assert_true(factor("{\"%true\": {\"job_resource_manager\": {\"cpu_model_to_cpu_to_vcpu_factor\":"
                       " {\"" EPYC "\": 1.21}}}}", 0, EPYC) == 1.0);
    /* enabled: the static factor before the model's; another model: 1 */
    assert_true(factor("{\"%true\": {\"job_resource_manager\": {\"enable_cpu_to_vcpu_factor\": "
                       "true, \"cpu_model_to_cpu_to_vcpu_factor\": {\"" EPYC "\": 10}}}}", 1.5,
                       EPYC) == 1.5);
    assert_true(factor("{\"%true\": {\"job_resource_manager\": {\"enable_cpu_to_vcpu_factor\": "
                       "true, \"cpu_model_to_cpu_to_vcpu_factor\": {\"" EPYC "\": 10}}}}", 0,
                       "other") == 1.0);
    /* no config: the static factor, else 1; unknown keys are kept */
    assert_true(factor("{}", 1.21, EPYC) == 1.21);
    assert_true(factor("{\"%true\": {\"exec_node\": {\"x\": 1}}}", 0, NULL) == 1.0);
}

static void expect_error(const char *config, const char *msg)
{
    struct ps_value v = json(config);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_node_dyncfg_check(&v, &err), PS_EINVAL);
    if (!strstr(err.msg, msg))
        fail_msg("%s: got \"%s\", want \"%s\"", config, err.msg, msg);
    ps_value_release(&v);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("[]", "//sys/cluster_nodes/@config: must be a map from a node filter");
    expect_error("{\"tag\": {}}", "tag: unsupported node filter");
    expect_error("{\"%true\": {\"job_resource_manager\": {\"cpu_to_vcpu_factor\": -1}}}",
                 "%true/job_resource_manager/cpu_to_vcpu_factor: must be a number greater than "
                 "0, got -1");
    expect_error("{\"%true\": {\"job_resource_manager\": {\"enable_cpu_to_vcpu_factor\": 1}}}",
                 "enable_cpu_to_vcpu_factor: must be true or false, got 1");
    expect_error("{\"%true\": {\"job_resource_manager\": {\"cpu_model_to_cpu_to_vcpu_factor\": "
                 "{\"m\": 0}}}}", "cpu_model_to_cpu_to_vcpu_factor/m: must be a number greater "
                 "than 0, got 0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resolution),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
