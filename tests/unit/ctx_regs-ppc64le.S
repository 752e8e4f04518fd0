/* SPDX-License-Identifier: MIT */
/*
 * Register-pattern helpers for tests/unit/test_ctx.c (ppc64le ELFv2).
 *
 * unsigned long ctx_regs_check(struct kc_ctx *self, struct kc_ctx *other,
 *                              unsigned long seed)
 *   fills rN (N = 14..31) with seed+N, fN with the bit pattern seed+100+N,
 *   vN (N = 20..31) with the doublewords {seed+200+N, ~(seed+200+N)},
 *   cr2-cr4 with bits 8-19 of seed<<12, VRSAVE with (u32)(seed*7), switches
 *   to `other` and, once resumed, returns a bit per register that did not
 *   come back (bits 0-17 r14-r31, 18-35 f14-f31, 36-47 v20-v31, 48 CR,
 *   49 VRSAVE, 50 r1), 0 when all did.
 * void ctx_regs_clobber(struct kc_ctx *self, struct kc_ctx *back,
 *                       unsigned long seed)
 *   fills the same registers from ~seed, switches to `back`, returns.
 * void ctx_sp_entry(void *arg)
 *   a context entry: records r1 at entry in ctx_entry_sp, then tail-calls
 *   ctx_sp_entry_c(arg).
 *
 * Frame (560 bytes): 0-31 header, 32 seed, 40 r1, 48 CR, 56 VRSAVE,
 * 64 scratch (16), 80 r14-r31, 224 f14-f31, 368 v20-v31.
 */
	.abiversion 2
	.machine power8
	.text

	.globl	ctx_regs_check
	.type	ctx_regs_check, @function
ctx_regs_check:
	mflr	0
	std	0, 16(1)
	stdu	1, -560(1)
	std	2, 24(1)
	mfcr	0
	stw	0, 48(1)
	mfvrsave 0
	stw	0, 56(1)
	std	14, 80(1)
	std	15, 88(1)
	std	16, 96(1)
	std	17, 104(1)
	std	18, 112(1)
	std	19, 120(1)
	std	20, 128(1)
	std	21, 136(1)
	std	22, 144(1)
	std	23, 152(1)
	std	24, 160(1)
	std	25, 168(1)
	std	26, 176(1)
	std	27, 184(1)
	std	28, 192(1)
	std	29, 200(1)
	std	30, 208(1)
	std	31, 216(1)
	stfd	14, 224(1)
	stfd	15, 232(1)
	stfd	16, 240(1)
	stfd	17, 248(1)
	stfd	18, 256(1)
	stfd	19, 264(1)
	stfd	20, 272(1)
	stfd	21, 280(1)
	stfd	22, 288(1)
	stfd	23, 296(1)
	stfd	24, 304(1)
	stfd	25, 312(1)
	stfd	26, 320(1)
	stfd	27, 328(1)
	stfd	28, 336(1)
	stfd	29, 344(1)
	stfd	30, 352(1)
	stfd	31, 360(1)
	li	9, 368
	stvx	20, 1, 9
	li	9, 384
	stvx	21, 1, 9
	li	9, 400
	stvx	22, 1, 9
	li	9, 416
	stvx	23, 1, 9
	li	9, 432
	stvx	24, 1, 9
	li	9, 448
	stvx	25, 1, 9
	li	9, 464
	stvx	26, 1, 9
	li	9, 480
	stvx	27, 1, 9
	li	9, 496
	stvx	28, 1, 9
	li	9, 512
	stvx	29, 1, 9
	li	9, 528
	stvx	30, 1, 9
	li	9, 544
	stvx	31, 1, 9
	std	5, 32(1)
	std	1, 40(1)
	addi	14, 5, 14
	addi	15, 5, 15
	addi	16, 5, 16
	addi	17, 5, 17
	addi	18, 5, 18
	addi	19, 5, 19
	addi	20, 5, 20
	addi	21, 5, 21
	addi	22, 5, 22
	addi	23, 5, 23
	addi	24, 5, 24
	addi	25, 5, 25
	addi	26, 5, 26
	addi	27, 5, 27
	addi	28, 5, 28
	addi	29, 5, 29
	addi	30, 5, 30
	addi	31, 5, 31
	addi	9, 5, 114
	std	9, 64(1)
	lfd	14, 64(1)
	addi	9, 5, 115
	std	9, 64(1)
	lfd	15, 64(1)
	addi	9, 5, 116
	std	9, 64(1)
	lfd	16, 64(1)
	addi	9, 5, 117
	std	9, 64(1)
	lfd	17, 64(1)
	addi	9, 5, 118
	std	9, 64(1)
	lfd	18, 64(1)
	addi	9, 5, 119
	std	9, 64(1)
	lfd	19, 64(1)
	addi	9, 5, 120
	std	9, 64(1)
	lfd	20, 64(1)
	addi	9, 5, 121
	std	9, 64(1)
	lfd	21, 64(1)
	addi	9, 5, 122
	std	9, 64(1)
	lfd	22, 64(1)
	addi	9, 5, 123
	std	9, 64(1)
	lfd	23, 64(1)
	addi	9, 5, 124
	std	9, 64(1)
	lfd	24, 64(1)
	addi	9, 5, 125
	std	9, 64(1)
	lfd	25, 64(1)
	addi	9, 5, 126
	std	9, 64(1)
	lfd	26, 64(1)
	addi	9, 5, 127
	std	9, 64(1)
	lfd	27, 64(1)
	addi	9, 5, 128
	std	9, 64(1)
	lfd	28, 64(1)
	addi	9, 5, 129
	std	9, 64(1)
	lfd	29, 64(1)
	addi	9, 5, 130
	std	9, 64(1)
	lfd	30, 64(1)
	addi	9, 5, 131
	std	9, 64(1)
	lfd	31, 64(1)
	addi	9, 5, 220
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	20, 1, 11
	addi	9, 5, 221
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	21, 1, 11
	addi	9, 5, 222
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	22, 1, 11
	addi	9, 5, 223
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	23, 1, 11
	addi	9, 5, 224
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	24, 1, 11
	addi	9, 5, 225
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	25, 1, 11
	addi	9, 5, 226
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	26, 1, 11
	addi	9, 5, 227
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	27, 1, 11
	addi	9, 5, 228
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	28, 1, 11
	addi	9, 5, 229
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	29, 1, 11
	addi	9, 5, 230
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	30, 1, 11
	addi	9, 5, 231
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	31, 1, 11
	sldi	9, 5, 12
	mtcrf	0x38, 9
	mulli	9, 5, 7
	mtvrsave 9
	bl	kc_ctx_switch
	nop
	ld	5, 32(1)
	li	3, 0
	addi	9, 5, 14
	cmpd	14, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 0
	or	3, 3, 8
1:
	addi	9, 5, 15
	cmpd	15, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 1
	or	3, 3, 8
1:
	addi	9, 5, 16
	cmpd	16, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 2
	or	3, 3, 8
1:
	addi	9, 5, 17
	cmpd	17, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 3
	or	3, 3, 8
1:
	addi	9, 5, 18
	cmpd	18, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 4
	or	3, 3, 8
1:
	addi	9, 5, 19
	cmpd	19, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 5
	or	3, 3, 8
1:
	addi	9, 5, 20
	cmpd	20, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 6
	or	3, 3, 8
1:
	addi	9, 5, 21
	cmpd	21, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 7
	or	3, 3, 8
1:
	addi	9, 5, 22
	cmpd	22, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 8
	or	3, 3, 8
1:
	addi	9, 5, 23
	cmpd	23, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 9
	or	3, 3, 8
1:
	addi	9, 5, 24
	cmpd	24, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 10
	or	3, 3, 8
1:
	addi	9, 5, 25
	cmpd	25, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 11
	or	3, 3, 8
1:
	addi	9, 5, 26
	cmpd	26, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 12
	or	3, 3, 8
1:
	addi	9, 5, 27
	cmpd	27, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 13
	or	3, 3, 8
1:
	addi	9, 5, 28
	cmpd	28, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 14
	or	3, 3, 8
1:
	addi	9, 5, 29
	cmpd	29, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 15
	or	3, 3, 8
1:
	addi	9, 5, 30
	cmpd	30, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 16
	or	3, 3, 8
1:
	addi	9, 5, 31
	cmpd	31, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 17
	or	3, 3, 8
1:
	stfd	14, 64(1)
	ld	10, 64(1)
	addi	9, 5, 114
	cmpd	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 18
	or	3, 3, 8
1:
	stfd	15, 64(1)
	ld	10, 64(1)
	addi	9, 5, 115
	cmpd	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 19
	or	3, 3, 8
1:
	stfd	16, 64(1)
	ld	10, 64(1)
	addi	9, 5, 116
	cmpd	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 20
	or	3, 3, 8
1:
	stfd	17, 64(1)
	ld	10, 64(1)
	addi	9, 5, 117
	cmpd	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 21
	or	3, 3, 8
1:
	stfd	18, 64(1)
	ld	10, 64(1)
	addi	9, 5, 118
	cmpd	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 22
	or	3, 3, 8
1:
	stfd	19, 64(1)
	ld	10, 64(1)
	addi	9, 5, 119
	cmpd	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 23
	or	3, 3, 8
1:
	stfd	20, 64(1)
	ld	10, 64(1)
	addi	9, 5, 120
	cmpd	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 24
	or	3, 3, 8
1:
	stfd	21, 64(1)
	ld	10, 64(1)
	addi	9, 5, 121
	cmpd	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 25
	or	3, 3, 8
1:
	stfd	22, 64(1)
	ld	10, 64(1)
	addi	9, 5, 122
	cmpd	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 26
	or	3, 3, 8
1:
	stfd	23, 64(1)
	ld	10, 64(1)
	addi	9, 5, 123
	cmpd	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 27
	or	3, 3, 8
1:
	stfd	24, 64(1)
	ld	10, 64(1)
	addi	9, 5, 124
	cmpd	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 28
	or	3, 3, 8
1:
	stfd	25, 64(1)
	ld	10, 64(1)
	addi	9, 5, 125
	cmpd	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 29
	or	3, 3, 8
1:
	stfd	26, 64(1)
	ld	10, 64(1)
	addi	9, 5, 126
	cmpd	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 30
	or	3, 3, 8
1:
	stfd	27, 64(1)
	ld	10, 64(1)
	addi	9, 5, 127
	cmpd	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 31
	or	3, 3, 8
1:
	stfd	28, 64(1)
	ld	10, 64(1)
	addi	9, 5, 128
	cmpd	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 32
	or	3, 3, 8
1:
	stfd	29, 64(1)
	ld	10, 64(1)
	addi	9, 5, 129
	cmpd	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 33
	or	3, 3, 8
1:
	stfd	30, 64(1)
	ld	10, 64(1)
	addi	9, 5, 130
	cmpd	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 34
	or	3, 3, 8
1:
	stfd	31, 64(1)
	ld	10, 64(1)
	addi	9, 5, 131
	cmpd	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 35
	or	3, 3, 8
1:
	li	11, 64
	stvx	20, 1, 11
	ld	10, 64(1)
	addi	9, 5, 220
	cmpd	10, 9
	bne	2f
	ld	10, 72(1)
	not	9, 9
	cmpd	10, 9
	beq	1f
2:
	li	8, 1
	sldi	8, 8, 36
	or	3, 3, 8
1:
	li	11, 64
	stvx	21, 1, 11
	ld	10, 64(1)
	addi	9, 5, 221
	cmpd	10, 9
	bne	2f
	ld	10, 72(1)
	not	9, 9
	cmpd	10, 9
	beq	1f
2:
	li	8, 1
	sldi	8, 8, 37
	or	3, 3, 8
1:
	li	11, 64
	stvx	22, 1, 11
	ld	10, 64(1)
	addi	9, 5, 222
	cmpd	10, 9
	bne	2f
	ld	10, 72(1)
	not	9, 9
	cmpd	10, 9
	beq	1f
2:
	li	8, 1
	sldi	8, 8, 38
	or	3, 3, 8
1:
	li	11, 64
	stvx	23, 1, 11
	ld	10, 64(1)
	addi	9, 5, 223
	cmpd	10, 9
	bne	2f
	ld	10, 72(1)
	not	9, 9
	cmpd	10, 9
	beq	1f
2:
	li	8, 1
	sldi	8, 8, 39
	or	3, 3, 8
1:
	li	11, 64
	stvx	24, 1, 11
	ld	10, 64(1)
	addi	9, 5, 224
	cmpd	10, 9
	bne	2f
	ld	10, 72(1)
	not	9, 9
	cmpd	10, 9
	beq	1f
2:
	li	8, 1
	sldi	8, 8, 40
	or	3, 3, 8
1:
	li	11, 64
	stvx	25, 1, 11
	ld	10, 64(1)
	addi	9, 5, 225
	cmpd	10, 9
	bne	2f
	ld	10, 72(1)
	not	9, 9
	cmpd	10, 9
	beq	1f
2:
	li	8, 1
	sldi	8, 8, 41
	or	3, 3, 8
1:
	li	11, 64
	stvx	26, 1, 11
	ld	10, 64(1)
	addi	9, 5, 226
	cmpd	10, 9
	bne	2f
	ld	10, 72(1)
	not	9, 9
	cmpd	10, 9
	beq	1f
2:
	li	8, 1
	sldi	8, 8, 42
	or	3, 3, 8
1:
	li	11, 64
	stvx	27, 1, 11
	ld	10, 64(1)
	addi	9, 5, 227
	cmpd	10, 9
	bne	2f
	ld	10, 72(1)
	not	9, 9
	cmpd	10, 9
	beq	1f
2:
	li	8, 1
	sldi	8, 8, 43
	or	3, 3, 8
1:
	li	11, 64
	stvx	28, 1, 11
	ld	10, 64(1)
	addi	9, 5, 228
	cmpd	10, 9
	bne	2f
	ld	10, 72(1)
	not	9, 9
	cmpd	10, 9
	beq	1f
2:
	li	8, 1
	sldi	8, 8, 44
	or	3, 3, 8
1:
	li	11, 64
	stvx	29, 1, 11
	ld	10, 64(1)
	addi	9, 5, 229
	cmpd	10, 9
	bne	2f
	ld	10, 72(1)
	not	9, 9
	cmpd	10, 9
	beq	1f
2:
	li	8, 1
	sldi	8, 8, 45
	or	3, 3, 8
1:
	li	11, 64
	stvx	30, 1, 11
	ld	10, 64(1)
	addi	9, 5, 230
	cmpd	10, 9
	bne	2f
	ld	10, 72(1)
	not	9, 9
	cmpd	10, 9
	beq	1f
2:
	li	8, 1
	sldi	8, 8, 46
	or	3, 3, 8
1:
	li	11, 64
	stvx	31, 1, 11
	ld	10, 64(1)
	addi	9, 5, 231
	cmpd	10, 9
	bne	2f
	ld	10, 72(1)
	not	9, 9
	cmpd	10, 9
	beq	1f
2:
	li	8, 1
	sldi	8, 8, 47
	or	3, 3, 8
1:
	mfcr	10
	rlwinm	10, 10, 0, 8, 19
	sldi	9, 5, 12
	rlwinm	9, 9, 0, 8, 19
	cmpw	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 48
	or	3, 3, 8
1:
	mfvrsave 10
	mulli	9, 5, 7
	clrldi	9, 9, 32
	clrldi	10, 10, 32
	cmpd	10, 9
	beq	1f
	li	8, 1
	sldi	8, 8, 49
	or	3, 3, 8
1:
	ld	10, 40(1)
	cmpd	10, 1
	beq	1f
	li	8, 1
	sldi	8, 8, 50
	or	3, 3, 8
1:
	ld	14, 80(1)
	ld	15, 88(1)
	ld	16, 96(1)
	ld	17, 104(1)
	ld	18, 112(1)
	ld	19, 120(1)
	ld	20, 128(1)
	ld	21, 136(1)
	ld	22, 144(1)
	ld	23, 152(1)
	ld	24, 160(1)
	ld	25, 168(1)
	ld	26, 176(1)
	ld	27, 184(1)
	ld	28, 192(1)
	ld	29, 200(1)
	ld	30, 208(1)
	ld	31, 216(1)
	lfd	14, 224(1)
	lfd	15, 232(1)
	lfd	16, 240(1)
	lfd	17, 248(1)
	lfd	18, 256(1)
	lfd	19, 264(1)
	lfd	20, 272(1)
	lfd	21, 280(1)
	lfd	22, 288(1)
	lfd	23, 296(1)
	lfd	24, 304(1)
	lfd	25, 312(1)
	lfd	26, 320(1)
	lfd	27, 328(1)
	lfd	28, 336(1)
	lfd	29, 344(1)
	lfd	30, 352(1)
	lfd	31, 360(1)
	li	9, 368
	lvx	20, 1, 9
	li	9, 384
	lvx	21, 1, 9
	li	9, 400
	lvx	22, 1, 9
	li	9, 416
	lvx	23, 1, 9
	li	9, 432
	lvx	24, 1, 9
	li	9, 448
	lvx	25, 1, 9
	li	9, 464
	lvx	26, 1, 9
	li	9, 480
	lvx	27, 1, 9
	li	9, 496
	lvx	28, 1, 9
	li	9, 512
	lvx	29, 1, 9
	li	9, 528
	lvx	30, 1, 9
	li	9, 544
	lvx	31, 1, 9
	lwz	0, 48(1)
	mtcrf	0x38, 0
	lwz	0, 56(1)
	mtvrsave 0
	addi	1, 1, 560
	ld	0, 16(1)
	mtlr	0
	blr
	.size	ctx_regs_check, . - ctx_regs_check

	.globl	ctx_regs_clobber
	.type	ctx_regs_clobber, @function
ctx_regs_clobber:
	mflr	0
	std	0, 16(1)
	stdu	1, -560(1)
	std	2, 24(1)
	mfcr	0
	stw	0, 48(1)
	mfvrsave 0
	stw	0, 56(1)
	std	14, 80(1)
	std	15, 88(1)
	std	16, 96(1)
	std	17, 104(1)
	std	18, 112(1)
	std	19, 120(1)
	std	20, 128(1)
	std	21, 136(1)
	std	22, 144(1)
	std	23, 152(1)
	std	24, 160(1)
	std	25, 168(1)
	std	26, 176(1)
	std	27, 184(1)
	std	28, 192(1)
	std	29, 200(1)
	std	30, 208(1)
	std	31, 216(1)
	stfd	14, 224(1)
	stfd	15, 232(1)
	stfd	16, 240(1)
	stfd	17, 248(1)
	stfd	18, 256(1)
	stfd	19, 264(1)
	stfd	20, 272(1)
	stfd	21, 280(1)
	stfd	22, 288(1)
	stfd	23, 296(1)
	stfd	24, 304(1)
	stfd	25, 312(1)
	stfd	26, 320(1)
	stfd	27, 328(1)
	stfd	28, 336(1)
	stfd	29, 344(1)
	stfd	30, 352(1)
	stfd	31, 360(1)
	li	9, 368
	stvx	20, 1, 9
	li	9, 384
	stvx	21, 1, 9
	li	9, 400
	stvx	22, 1, 9
	li	9, 416
	stvx	23, 1, 9
	li	9, 432
	stvx	24, 1, 9
	li	9, 448
	stvx	25, 1, 9
	li	9, 464
	stvx	26, 1, 9
	li	9, 480
	stvx	27, 1, 9
	li	9, 496
	stvx	28, 1, 9
	li	9, 512
	stvx	29, 1, 9
	li	9, 528
	stvx	30, 1, 9
	li	9, 544
	stvx	31, 1, 9
	not	5, 5
	addi	14, 5, 14
	addi	15, 5, 15
	addi	16, 5, 16
	addi	17, 5, 17
	addi	18, 5, 18
	addi	19, 5, 19
	addi	20, 5, 20
	addi	21, 5, 21
	addi	22, 5, 22
	addi	23, 5, 23
	addi	24, 5, 24
	addi	25, 5, 25
	addi	26, 5, 26
	addi	27, 5, 27
	addi	28, 5, 28
	addi	29, 5, 29
	addi	30, 5, 30
	addi	31, 5, 31
	addi	9, 5, 114
	std	9, 64(1)
	lfd	14, 64(1)
	addi	9, 5, 115
	std	9, 64(1)
	lfd	15, 64(1)
	addi	9, 5, 116
	std	9, 64(1)
	lfd	16, 64(1)
	addi	9, 5, 117
	std	9, 64(1)
	lfd	17, 64(1)
	addi	9, 5, 118
	std	9, 64(1)
	lfd	18, 64(1)
	addi	9, 5, 119
	std	9, 64(1)
	lfd	19, 64(1)
	addi	9, 5, 120
	std	9, 64(1)
	lfd	20, 64(1)
	addi	9, 5, 121
	std	9, 64(1)
	lfd	21, 64(1)
	addi	9, 5, 122
	std	9, 64(1)
	lfd	22, 64(1)
	addi	9, 5, 123
	std	9, 64(1)
	lfd	23, 64(1)
	addi	9, 5, 124
	std	9, 64(1)
	lfd	24, 64(1)
	addi	9, 5, 125
	std	9, 64(1)
	lfd	25, 64(1)
	addi	9, 5, 126
	std	9, 64(1)
	lfd	26, 64(1)
	addi	9, 5, 127
	std	9, 64(1)
	lfd	27, 64(1)
	addi	9, 5, 128
	std	9, 64(1)
	lfd	28, 64(1)
	addi	9, 5, 129
	std	9, 64(1)
	lfd	29, 64(1)
	addi	9, 5, 130
	std	9, 64(1)
	lfd	30, 64(1)
	addi	9, 5, 131
	std	9, 64(1)
	lfd	31, 64(1)
	addi	9, 5, 220
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	20, 1, 11
	addi	9, 5, 221
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	21, 1, 11
	addi	9, 5, 222
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	22, 1, 11
	addi	9, 5, 223
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	23, 1, 11
	addi	9, 5, 224
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	24, 1, 11
	addi	9, 5, 225
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	25, 1, 11
	addi	9, 5, 226
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	26, 1, 11
	addi	9, 5, 227
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	27, 1, 11
	addi	9, 5, 228
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	28, 1, 11
	addi	9, 5, 229
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	29, 1, 11
	addi	9, 5, 230
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	30, 1, 11
	addi	9, 5, 231
	std	9, 64(1)
	not	9, 9
	std	9, 72(1)
	li	11, 64
	lvx	31, 1, 11
	sldi	9, 5, 12
	mtcrf	0x38, 9
	mulli	9, 5, 7
	mtvrsave 9
	bl	kc_ctx_switch
	nop
	ld	14, 80(1)
	ld	15, 88(1)
	ld	16, 96(1)
	ld	17, 104(1)
	ld	18, 112(1)
	ld	19, 120(1)
	ld	20, 128(1)
	ld	21, 136(1)
	ld	22, 144(1)
	ld	23, 152(1)
	ld	24, 160(1)
	ld	25, 168(1)
	ld	26, 176(1)
	ld	27, 184(1)
	ld	28, 192(1)
	ld	29, 200(1)
	ld	30, 208(1)
	ld	31, 216(1)
	lfd	14, 224(1)
	lfd	15, 232(1)
	lfd	16, 240(1)
	lfd	17, 248(1)
	lfd	18, 256(1)
	lfd	19, 264(1)
	lfd	20, 272(1)
	lfd	21, 280(1)
	lfd	22, 288(1)
	lfd	23, 296(1)
	lfd	24, 304(1)
	lfd	25, 312(1)
	lfd	26, 320(1)
	lfd	27, 328(1)
	lfd	28, 336(1)
	lfd	29, 344(1)
	lfd	30, 352(1)
	lfd	31, 360(1)
	li	9, 368
	lvx	20, 1, 9
	li	9, 384
	lvx	21, 1, 9
	li	9, 400
	lvx	22, 1, 9
	li	9, 416
	lvx	23, 1, 9
	li	9, 432
	lvx	24, 1, 9
	li	9, 448
	lvx	25, 1, 9
	li	9, 464
	lvx	26, 1, 9
	li	9, 480
	lvx	27, 1, 9
	li	9, 496
	lvx	28, 1, 9
	li	9, 512
	lvx	29, 1, 9
	li	9, 528
	lvx	30, 1, 9
	li	9, 544
	lvx	31, 1, 9
	lwz	0, 48(1)
	mtcrf	0x38, 0
	lwz	0, 56(1)
	mtvrsave 0
	addi	1, 1, 560
	ld	0, 16(1)
	mtlr	0
	blr
	.size	ctx_regs_clobber, . - ctx_regs_clobber

	.globl	ctx_sp_entry
	.type	ctx_sp_entry, @function
ctx_sp_entry:
0:	addis	2, 12, .TOC.-0b@ha
	addi	2, 2, .TOC.-0b@l
	.localentry ctx_sp_entry, . - ctx_sp_entry
	addis	9, 2, ctx_entry_sp@toc@ha
	std	1, ctx_entry_sp@toc@l(9)
	b	ctx_sp_entry_c
	.size	ctx_sp_entry, . - ctx_sp_entry

	.section .note.GNU-stack, "", @progbits
