package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/gpulens/gpulens/analyzer/inventory/kube"
	"github.com/gpulens/gpulens/analyzer/reclaim"
	"github.com/gpulens/gpulens/analyzer/session"
	"github.com/gpulens/gpulens/internal/promdur"
)

func newReclaimCmd() *cobra.Command {
	var (
		src                  sourceFlags
		cfg                  reclaim.Config
		logLevel, kubeconfig string
		undoContext          string
	)
	c := &cobra.Command{Use: "reclaim", GroupID: "basic", Args: cobra.NoArgs, Long: help("reclaim"),
		Short: "Release GPUs idle past a policy, in opted-in namespaces: announced, reversible, dry run unless --act",
		RunE: func(c *cobra.Command, _ []string) error {
			logger, err := newLogger(logLevel, c.ErrOrStderr())
			if err != nil {
				return err
			}
			kctx, err := reclaim.OneContext(src.Contexts, src.AllContexts)
			if err != nil {
				return usageError{err}
			}
			cfg.Open = func(ctx context.Context, window time.Duration) (*session.Session, error) {
				src.Since = promdur.Format(window)
				return src.open(ctx, time.Now(), logger, nil)
			}
			if cfg.Client, err = kubeClient(src.Kubeconfig, kctx); err != nil {
				return err
			}
			cfg.Logger = logger
			err = reclaim.Run(c.Context(), cfg)
			if ce := (*reclaim.ConfigError)(nil); errors.As(err, &ce) {
				return usageError{ce.Err}
			}
			return err
		}}
	src.register(c.Flags())
	src.JudgeNow = true // idle is judged now: a store that stopped is stale, not idle
	cfg.RegisterFlags(c.Flags())
	_ = c.Flags().MarkHidden("since") // the policy's idle.for: idle for all of the window
	c.Flags().StringVar(&logLevel, "log.level", "info", "Log level: debug, info, warn or error")
	undo := &cobra.Command{Use: "undo NAMESPACE/KIND/NAME", Args: cobra.ExactArgs(1), Short: "Restore a reclaimed workload's replicas, or resume it",
		RunE: func(c *cobra.Command, args []string) error {
			ref, err := reclaim.ParseRef(args[0])
			if err != nil {
				return usageError{err}
			}
			client, err := kubeClient(kubeconfig, undoContext)
			if err != nil {
				return err
			}
			if _, err = (&reclaim.Actuator{Client: client, Identity: "gpulens-reclaim-undo"}).Undo(c.Context(), ref); err == nil {
				_, err = fmt.Fprintf(c.OutOrStdout(), "%s restored\n", ref)
			}
			return err
		}}
	undo.Flags().StringVar(&kubeconfig, "kubeconfig", "", "Kubeconfig file (default: in-cluster, $KUBECONFIG or ~/.kube/config)")
	undo.Flags().StringVar(&undoContext, "context", "", "Kubeconfig context of the workload's cluster (default: the current one)")
	c.AddCommand(undo)
	return c
}

func kubeClient(kubeconfig, context string) (kubernetes.Interface, error) {
	c, err := kube.NewClient(kube.Options{Kubeconfig: kubeconfig, Context: context})
	if err != nil {
		return nil, exitError{exitNoCluster, err}
	}
	return c, nil
}
